#!/bin/bash
#SBATCH --job-name=oc1a2b3c4d-r8
#SBATCH --chdir="/shared/outcore/runs/8"
#SBATCH --output="/shared/outcore/runs/8/slurm-%j.out"
#SBATCH --error="/shared/outcore/runs/8/stderr.log"
#SBATCH --open-mode=append
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --mem=640M
# outcore run 8 of experiment 2 (experiments/slurm/script.go). Records go to one
# file per execution of the job in the run directory; the server ingests them as they grow.
set -u
run_dir='/shared/outcore/runs/8'
records="$run_dir/records-${SLURM_JOB_ID}-${SLURM_RESTART_COUNT:-0}.jsonl"
data_dir='/scratch/outcore'
outcore='/opt/outcore/bin/outcore'
export OUTCORE_GEMM='gonum'
export NOTE='it'\''s quoted'
export OUTCORE_RUN_ID=8
echo "outcore: Slurm job $SLURM_JOB_ID on $(hostname) (execution ${SLURM_RESTART_COUNT:-0})" >&2
# Per-node data directory: generate the dataset here when missing (one job at a time).
if [ ! -f "$data_dir/datasets/"'tiny'/meta.json ]; then
  mkdir -p "$data_dir" || exit 10
  gen=("$outcore" data gen --like "$run_dir/dataset-meta.json" --name 'tiny' --data-dir "$data_dir" --quiet)
  if command -v flock >/dev/null 2>&1; then
    flock "$data_dir/.gen-"'tiny'.lock sh -c 'm=$1; shift; [ -f "$m" ] || exec "$@"' _ "$data_dir/datasets/"'tiny'/meta.json "${gen[@]}" >&2 || exit 10
  else
    "${gen[@]}" >&2 || exit 10
  fi
fi
"$outcore" data digest 'tiny' --data-dir "$data_dir" --check abababababababababababababababababababababababababababababababab >&2 || exit 11
exec '/opt/outcore/bin/outcore' 'train' '--config' "$run_dir/config.json" >>"$records"
