#!/bin/bash
#SBATCH --job-name=oc1a2b3c4d-r7
#SBATCH --chdir="/shared/outcore/runs/7"
#SBATCH --output="/shared/outcore/runs/7/slurm-%j.out"
#SBATCH --error="/shared/outcore/runs/7/stderr.log"
#SBATCH --open-mode=append
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --mem=1280M
#SBATCH --cpus-per-task=2
#SBATCH --time=02:00:00
#SBATCH --partition=gpu
# outcore run 7 of experiment 2 (experiments/slurm/script.go). Records go to one
# file per execution of the job in the run directory; the server ingests them as they grow.
set -u
run_dir='/shared/outcore/runs/7'
records="$run_dir/records-${SLURM_JOB_ID}-${SLURM_RESTART_COUNT:-0}.jsonl"
data_dir='/shared/outcore'
outcore='/shared/bin/outcore'
export OUTCORE_RUN_ID=7
echo "outcore: Slurm job $SLURM_JOB_ID on $(hostname) (execution ${SLURM_RESTART_COUNT:-0})" >&2
"$outcore" data digest 'papers-like' --data-dir "$data_dir" --check abababababababababababababababababababababababababababababababab >&2 || exit 11
exec '/shared/bin/outcore' 'train' '--config' "$run_dir/config.json" >>"$records"
