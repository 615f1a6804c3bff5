#!/bin/bash
# The device checks of docs/benchmarks/gpu.md in one time-boxed run, on a
# machine with an NVIDIA GPU, the CUDA driver, NVRTC, cuBLAS and Python with
# PyTorch and PyTorch Geometric, cgroup v2 and root. Run from the repository
# root with, built elsewhere (the device has no Go toolchain):
#   $BIN/outcore    go build (BIN defaults to bin) -trimpath -ldflags "-s -w" -o bin/outcore .
#   $BIN/cuda.test  go test -c -o bin/cuda.test ./engine/cuda
# Every phase has its own timeout, so what finished is in $OUT (default
# ./out) even when a later phase runs out of time.
#   1. engine/cuda's GPU tests, and one SAGE step (1000 seeds, 10,10,10,
#      128 -> 256 -> 256 -> 47) timed on the GPU (input through pinned
#      staging, and the pageable copy for comparison) and on the CPU
#      trainer, on the same batch, which it writes out;
#   2. PyTorch Geometric's step on exactly that batch
#      (scripts/pyg_same_batch.py);
#   3. `medium` generated here, one epoch under a host limit of LIMIT_PCT %
#      of its feature bytes: gnndrive (feature_buffer=device) and pyg+ with
#      the trainer on the GPU (outcore's own memory contract:
#      --mem-limit, the cgroup set from the child's first instruction), and
#      PyG with memory-mapped features (scripts/pyg_mmap_epoch.py) in a
#      cgroup whose memory.max is set before it starts: LIMIT_PCT % of the
#      feature bytes + the device budget (10 %, device_mem's default) +
#      the PyTorch/CUDA runtime's own memory, measured first by a probe.
#      The outcore runs' sample records carry NVML's utilisation, memory
#      and PCIe throughput every second.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
LIMIT_PCT=${LIMIT_PCT:-25}
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

echo "== 1 engine/cuda tests + SAGE step (GPU staged/pageable, CPU) $(t)"
OUTCORE_GPU_STEP=1 OUTCORE_GPU_CPU_STEP=1 OUTCORE_GPU_STEP_DUMP=/tmp/batch timeout 80 ./$BIN/cuda.test -test.v -test.count=1 -test.timeout 75s \
  -test.run 'Kernels|Open|ModelMatches|BadInput|StagedCopy|ParallelCopy|StepTime' > "$OUT/cuda-test.txt" 2>&1; echo rc=$?
grep -E "^(--- |ok|FAIL|panic)|cuda_test.go|staging_test.go" "$OUT/cuda-test.txt" | cut -c1-400 | head -30

echo "== 2 PyG on the same batch $(t)"
timeout 45 python3 scripts/pyg_same_batch.py --dir /tmp/batch > "$OUT/pyg-same-batch.json" 2> "$OUT/pyg-same-batch.err"; echo rc=$?
tail -3 "$OUT/pyg-same-batch.err"

echo "== 3 medium $(t)"
timeout 30 ./$BIN/outcore data gen --preset medium --name medium --data-dir $D --quiet || echo gen-failed
FB=$(python3 -c "import json;print(json.load(open('$D/datasets/medium/meta.json'))['files']['features.bin'])")
echo "feature bytes $FB"
# the PyTorch/CUDA runtime's own memory: a probe that loads what the epoch
# script loads and starts CUDA, in its own group; after memory.reclaim
echo +memory > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
PR=/sys/fs/cgroup/ocprobe; mkdir -p $PR
( echo $BASHPID > $PR/cgroup.procs && exec timeout 20 python3 -c "
import torch, torch_geometric, numpy, os
from torch_geometric.nn import SAGEConv
m = SAGEConv(128, 256).cuda(); torch.zeros(1, device='cuda').sum().item()
cg = '/sys/fs/cgroup/ocprobe'
try: open(cg + '/memory.reclaim', 'w').write(str(1 << 40))
except OSError: pass
st = dict(l.split() for l in open(cg + '/memory.stat'))
print(open(cg + '/memory.current').read().strip(), st['anon'], st['file'])
" ) > "$OUT/torch-runtime-probe.txt" 2>&1
cat "$OUT/torch-runtime-probe.txt"
RT=$(awk 'NR==1{print $1}' "$OUT/torch-runtime-probe.txt"); [[ "$RT" =~ ^[0-9]+$ ]] || RT=$((1200<<20))
ep="--dataset medium --data-dir $D --mem-limit ${LIMIT_PCT}% --epochs 1 --eval-max-nodes 2000 --device cuda"
run() { # name timeout args...
  local n=$1 to=$2; shift 2
  echo "-- $n $(t)"
  timeout "$to" ./$BIN/outcore train $ep "$@" > "$OUT/medium-$n.jsonl" 2>&1; echo rc=$?
  grep '"type":"epoch"\|"type":"summary"' "$OUT/medium-$n.jsonl" | grep -o '"epoch_s":[0-9.]*\|"train_s":[0-9.]*\|"stall_s":[0-9.]*\|"feature_bytes_read":[0-9]*\|"outcome":"[a-z]*"\|"error":"[^"]*\|"peak_cgroup_bytes":[0-9]*\|"test_acc":[0-9.]*' | tr '\n' ' '; echo
  grep '"type":"progress"' "$OUT/medium-$n.jsonl" | tail -n1 | cut -c1-300
  grep -o '"gpu_pcie_rx_mbps":[0-9.]*' "$OUT/medium-$n.jsonl" | sort -t: -k2 -g | tail -1
}
run gnndrive $((EPOCH_S + 15)) --system gnndrive --opt feature_buffer=device
if ! grep -q '"outcome":"done"' "$OUT/medium-gnndrive.jsonl" && ! grep -q '"type":"epoch"' "$OUT/medium-gnndrive.jsonl"; then
  grep -o '"error":"[^"]*' "$OUT/medium-gnndrive.jsonl" | head -2
  # refused below its floor on this machine: the same with 4 cores' worth of
  # Go threads, which the floor's profiled heap depends on
  GOMAXPROCS=4 run gnndrive-gomaxprocs4 $((EPOCH_S + 15)) --system gnndrive --opt feature_buffer=device
fi
run pygplus $((EPOCH_S - 10)) --system pyg+
L=$(( FB * LIMIT_PCT / 100 + FB / 10 + RT ))
echo "-- PyG, memory-mapped features, memory.max $L from the start (runtime $RT) $(t)"
CG=/sys/fs/cgroup/pygmmap; mkdir -p $CG; echo $L > $CG/memory.max; echo 0 > $CG/memory.swap.max 2>/dev/null
( echo $BASHPID > $CG/cgroup.procs && exec timeout $EPOCH_S python3 scripts/pyg_mmap_epoch.py --data $D/datasets/medium \
    --time-limit-s $((EPOCH_S - 20)) ) > "$OUT/medium-pyg-mmap.json" 2> "$OUT/medium-pyg-mmap.err"; echo rc=$?
echo "memory.max $(cat $CG/memory.max) peak $(cat $CG/memory.peak 2>/dev/null) oom_kill $(grep oom_kill $CG/memory.events 2>/dev/null)" | tee "$OUT/medium-pyg-mmap-cgroup.txt"
grep -v '^ *[0-9],*$\|^ *\]' "$OUT/medium-pyg-mmap.json" | tr -d '\n '; echo; tail -3 "$OUT/medium-pyg-mmap.err"
echo "== end $(t)"
