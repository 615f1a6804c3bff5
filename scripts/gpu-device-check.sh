#!/bin/bash
# The device checks of docs/benchmarks/gpu.md in one time-boxed run, on a
# machine with an NVIDIA GPU, the CUDA driver, NVRTC, cuBLAS and Python with
# PyTorch and PyTorch Geometric, cgroup v2 and root. Run from the repository
# root with, built elsewhere (the device has no Go toolchain):
#   $BIN/outcore    go build -trimpath -ldflags "-s -w" -o $BIN/outcore ./cmd/outcore
#   $BIN/cuda.test  go test -c -o $BIN/cuda.test ./engine/cuda
# (BIN defaults to bin; CPU_STEP=1 also times the CPU trainer's step.)
# Every phase has its own timeout, so what finished is in $OUT (default
# ./out) even when a later phase runs out of time.
#   1. engine/cuda's GPU tests, and one SAGE step (1000 seeds, 10,10,10,
#      128 -> 256 -> 256 -> 47) timed on the GPU (input through pinned
#      staging, and the pageable copy for comparison) and on the CPU
#      trainer, on the same batch, which it writes out;
#   2. PyTorch Geometric's step on exactly that batch
#      (scripts/pyg_same_batch.py);
#   3. `medium` generated here, one epoch for each PERCENT:SYSTEM of RUNS
#      (default "25:gnndrive 25:pygplus 25:pyg"; the host limit as a percent
#      of the feature bytes; "pyg" after the outcore runs at its percent):
#      gnndrive (feature_buffer=device) and pyg+ with the trainer on the GPU (outcore's own memory contract:
#      --mem-limit, the cgroup set from the child's first instruction), and
#      PyG with memory-mapped features (scripts/pyg_mmap_epoch.py) in a
#      cgroup whose memory.max is set before it starts: the same share of
#      the feature bytes + the device budget (10 %, device_mem's default) +
#      the model step outcore's run at that limit held outside + the
#      PyTorch/CUDA runtime's own memory, measured first by a probe (as
#      outcore's runs hold their GPU runtime's).
#      The outcore runs' sample records carry NVML's utilisation, memory
#      and PCIe throughput every second.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
EPOCH_S=${EPOCH_S:-60}
BIN=${BIN:-bin} # where outcore and cuda.test are (.gpu on the device run)
export PYTHONUNBUFFERED=1
D=/tmp/ocgpu; mkdir -p $D
t() { date -u +%T; }
{
echo "== 0 machine $(t)"
nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.max,pcie.link.width.max --format=csv,noheader
nproc; free -g | head -2; uname -r
python3 - <<'PY'
import importlib
for m in ["torch", "torch_geometric", "pyg_lib", "torch_sparse", "torch_scatter"]:
    try:
        mod = importlib.import_module(m)
        print(m, getattr(mod, "__version__", "?"))
    except Exception as e:
        print(m, "MISSING", type(e).__name__)
PY
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

echo "== 1 engine/cuda tests + SAGE step (GPU staged/pageable; CPU with CPU_STEP=1) $(t)"
CPU_STEP=${CPU_STEP:-}
OUTCORE_GPU_STEP=1 OUTCORE_GPU_CPU_STEP=$CPU_STEP OUTCORE_GPU_STEP_DUMP=/tmp/batch timeout 80 ./$BIN/cuda.test -test.v -test.count=1 -test.timeout 75s \
  -test.run "${CUDA_TESTS:-Kernels|Open|ModelMatches|BadInput|StagedCopy|StepTime}" > "$OUT/cuda-test.txt" 2>&1; echo rc=$?
grep -E "^(--- |ok|FAIL|panic)|cuda_test.go|staging_test.go" "$OUT/cuda-test.txt" | cut -c1-400 | head -30

echo "== 2 PyG on the same batch $(t)"
timeout 45 python3 scripts/pyg_same_batch.py --dir /tmp/batch > "$OUT/pyg-same-batch.json" 2> "$OUT/pyg-same-batch.err"; echo rc=$?
tail -3 "$OUT/pyg-same-batch.err"

echo "== 3 medium $(t)"
[ -f $D/datasets/medium/meta.json ] || timeout 30 ./$BIN/outcore data gen --preset medium --name medium --data-dir $D --quiet || echo gen-failed
FB=$(python3 -c "import json;print(json.load(open('$D/datasets/medium/meta.json'))['files']['features.bin'])")
echo "feature bytes $FB"
# the PyTorch/CUDA runtime's own memory: a probe that loads what the epoch
# script loads and starts CUDA, in its own group; after memory.reclaim
echo +memory > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
PR=/sys/fs/cgroup/ocprobe2; mkdir -p $PR
( echo $BASHPID > $PR/cgroup.procs && exec timeout 20 python3 -c "
import torch, torch_geometric, numpy, os
from torch_geometric.nn import SAGEConv
m = SAGEConv(128, 256).cuda(); torch.zeros(1, device='cuda').sum().item()
cg = '/sys/fs/cgroup/ocprobe2'
try: open(cg + '/memory.reclaim', 'w').write(str(1 << 40))
except OSError: pass
st = dict(l.split() for l in open(cg + '/memory.stat'))
print(open(cg + '/memory.current').read().strip(), st['anon'], st['file'])
" ) > "$OUT/torch-runtime-probe.txt" 2>&1
cat "$OUT/torch-runtime-probe.txt"
RT=$(awk 'NR==1{print $1}' "$OUT/torch-runtime-probe.txt"); [[ "$RT" =~ ^[0-9]+$ ]] || RT=$((1200<<20))
run() { # pct name timeout args...
  local pct=$1 n=$2 to=$3; shift 3
  echo "-- $n at $pct % $(t)"
  timeout "$to" ./$BIN/outcore train --dataset medium --data-dir $D --mem-limit ${pct}% --epochs 1 --eval-max-nodes 2000 --device cuda "$@" > "$OUT/medium$pct-$n.jsonl" 2>&1; echo rc=$?
  grep '"type":"epoch"\|"type":"summary"' "$OUT/medium$pct-$n.jsonl" | grep -o '"epoch_s":[0-9.]*\|"train_s":[0-9.]*\|"stall_s":[0-9.]*\|"feature_bytes_read":[0-9]*\|"outcome":"[a-z]*"\|"error":"[^"]*\|"peak_cgroup_bytes":[0-9]*\|"test_acc":[0-9.]*' | tr '\n' ' '; echo
  grep '"type":"progress"' "$OUT/medium$pct-$n.jsonl" | tail -n1 | cut -c1-300
  grep -o "GPU runtime's host memory ([0-9]* MiB\|model step ([0-9]* MiB\|the cgroup limit is [0-9]* MiB" "$OUT/medium$pct-$n.jsonl" | sort -u | tr '\n' ' '; echo
  grep -o '"gpu_pcie_rx_mbps":[0-9.]*' "$OUT/medium$pct-$n.jsonl" | sort -t: -k2 -g | tail -1
}
pyg() { # pct: PyG with memory-mapped features in a fresh group limited from its start
  local pct=$1 cg=/sys/fs/cgroup/pygmmap-$1-$$
  # the same allowance as outcore's runs: pct % of the feature bytes, the
  # device budget (10 %), the model step outcore holds outside, and the
  # runtime (PyTorch's, measured by the probe)
  local ms=$(grep -oh 'model step ([0-9]* MiB' "$OUT"/medium$pct-*.jsonl | head -1 | grep -o '[0-9]*')
  local L=$(( FB * pct / 100 + FB / 10 + ${ms:-0} * 1048576 + RT ))
  echo "-- PyG mmap at $pct %: memory.max $L from the start (runtime $RT, model step ${ms:-0} MiB) $(t)"
  mkdir -p $cg; echo $L > $cg/memory.max; echo 0 > $cg/memory.swap.max 2>/dev/null
  ( echo $BASHPID > $cg/cgroup.procs && exec timeout $EPOCH_S python3 scripts/pyg_mmap_epoch.py --data $D/datasets/medium \
      --time-limit-s $((EPOCH_S - 15)) ) > "$OUT/medium$pct-pyg-mmap.json" 2> "$OUT/medium$pct-pyg-mmap.err"; echo rc=$?
  echo "memory.max $(cat $cg/memory.max) peak $(cat $cg/memory.peak 2>/dev/null) $(grep oom_kill $cg/memory.events 2>/dev/null)" >> "$OUT/medium$pct-pyg-mmap.err"
  grep -v '^ *[0-9],*$\|^ *\]' "$OUT/medium$pct-pyg-mmap.json" | tr -d '\n '; echo; grep -v '^batch' "$OUT/medium$pct-pyg-mmap.err" | tail -3; grep '^batch' "$OUT/medium$pct-pyg-mmap.err" | tail -1
}
for r in ${RUNS:-25:gnndrive 25:pygplus 25:pyg}; do
  pct=${r%%:*}
  case ${r#*:} in
    gnndrive) run $pct gnndrive $((EPOCH_S + 15)) --system gnndrive --opt feature_buffer=device ;;
    pygplus) run $pct pygplus $EPOCH_S --system pyg+ ;;
    pyg) pyg $pct ;;
  esac
done
echo "== end $(t)"
