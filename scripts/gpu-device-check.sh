#!/bin/bash
# The device checks of docs/benchmarks/gpu.md in one run, on a machine with
# an NVIDIA GPU, the CUDA driver, NVRTC, cuBLAS and Python with PyTorch and
# PyTorch Geometric. Run from a folder that holds, built elsewhere:
#   outcore            go build -o outcore .
#   cuda.test          go test -c -o cuda.test ./engine/cuda
#   cora/              ../shared/datasets/cora (LINQS files + derived/)
#   pyg_*.py           scripts/pyg_common.py, pyg_mmap_epoch.py
# Writes its outputs to $OUT (default ./out). LIMIT is the memory limit of the
# medium epochs (default 60%: gnndrive's floor on medium is 272 MiB on 2 cores and
# 401 MiB on 16, above 25 % and 30 %); BUDGET_MIB the same share in MiB for PyG.
cd "$(dirname "$0")"
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
LIMIT=${LIMIT:-60%}; BUDGET_MIB=${BUDGET_MIB:-614}
export OUTCORE_CORA=$PWD/cora PYTHONUNBUFFERED=1
D=/tmp/ocgpu; mkdir -p $D
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
echo "== 1 engine/cuda tests $(date -u +%T)"
OUTCORE_GPU_STEP=1 timeout 45 ./cuda.test -test.v -test.count=1 -test.timeout 40s -test.run 'Kernels|Open|ModelMatches|BadInput|StepTime' > $OUT/cuda-test.txt 2>&1; echo rc=$?
OUTCORE_CORA_CPU_SEEDS=1 timeout 80 ./cuda.test -test.v -test.count=1 -test.timeout 75s -test.run 'Cora' >> $OUT/cuda-test.txt 2>&1; echo rc=$?
grep -E "^(--- |ok|FAIL|panic)|cuda_test.go|cora_test.go" $OUT/cuda-test.txt | cut -c1-220 | head -40
echo "== 2 Cora, outcore train --device cuda, seed 1 of each model $(date -u +%T)"
./outcore data import linqs cora --name cora --split planetoid --data-dir $D > /dev/null 2>&1 || echo import-failed
common="--dataset cora --data-dir $D --layers 2 --fanout -1,-1 --batch 0 --epochs 200 --row-normalize --eval full --weight-decay 5e-4 --device cuda"
declare -A SETUP=([sage]="--hidden 64 --dropout 0.5 --lr 0.01" [gcn]="--hidden 16 --dropout 0.5 --lr 0.01" [gat]="--hidden 64 --heads 8 --dropout 0.6 --lr 0.005")
for m in sage gcn gat; do
  timeout 40 ./outcore train $common --model $m ${SETUP[$m]} --seed 1 > $D/cora-$m-1.jsonl 2>&1
  echo "$m seed 1: $(grep '"type":"summary"' $D/cora-$m-1.jsonl | grep -o '"test_acc":[0-9.]*\|"mean_epoch_s":[0-9.e-]*\|"error":"[^"]*' | tr '\n' ' ') $(grep -o 'trainer on the GPU[^"]*' $D/cora-$m-1.jsonl | head -1)"
done | tee $OUT/cora-cli.txt
echo "== 3 medium $(date -u +%T)"
timeout 40 ./outcore data gen --preset medium --name medium --data-dir $D --quiet || echo gen-failed
ep="--dataset medium --data-dir $D --mem-limit $LIMIT --epochs 1 --eval-max-nodes 2000 --device cuda"
for sys in gnndrive:feature_buffer=device pyg+; do
  name=${sys%%:*}; opt=""; [ "$sys" != "$name" ] && opt="--opt ${sys#*:}"
  echo "-- $sys $(date -u +%T)"
  timeout ${EPOCH_TIMEOUT:-110} ./outcore train $ep --system $name $opt > $OUT/medium-${name/+/plus}.jsonl 2>&1; echo rc=$?
  grep '"type":"epoch"\|"type":"summary"' $OUT/medium-${name/+/plus}.jsonl | grep -o '"epoch_s":[0-9.]*\|"sample_s":[0-9.]*\|"extract_s":[0-9.]*\|"train_s":[0-9.]*\|"stall_s":[0-9.]*\|"feature_bytes_read":[0-9]*\|"outcome":"[a-z]*"\|"error":"[^"]*\|"peak_cgroup_bytes":[0-9]*' | tr '\n' ' '; echo
  grep '"type":"progress"' $OUT/medium-${name/+/plus}.jsonl | tail -n1 | cut -c1-300
  grep -o 'trainer on the GPU[^"]*' $OUT/medium-${name/+/plus}.jsonl | head -1
done
echo "-- PyG, features memory-mapped, budget $BUDGET_MIB MiB $(date -u +%T)"
CG=/sys/fs/cgroup/pygmmap; mkdir -p $CG; echo +memory > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
( echo $BASHPID > $CG/cgroup.procs && exec timeout ${EPOCH_TIMEOUT:-110} python3 pyg_mmap_epoch.py --data $D/datasets/medium --mem-budget-mib $BUDGET_MIB --time-limit-s $(( ${EPOCH_TIMEOUT:-110} - 25 )) ) > $OUT/medium-pyg-mmap.json 2> $OUT/medium-pyg-mmap.err; echo rc=$?
grep -v '^ *[0-9],*$\|^ *\]' $OUT/medium-pyg-mmap.json | tr -d '\n '; echo; tail -3 $OUT/medium-pyg-mmap.err
echo "== end $(date -u +%T)"
