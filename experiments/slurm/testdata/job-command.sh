#!/bin/bash
#SBATCH --job-name=oc1a2b3c4d-r9
#SBATCH --chdir="/tmp/d/runs/9"
#SBATCH --output="/tmp/d/runs/9/slurm-%j.out"
#SBATCH --error="/tmp/d/runs/9/stderr.log"
#SBATCH --open-mode=append
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --mem=100M
#SBATCH --time=1-12
# outcore run 9 of experiment 3 (experiments/slurm/script.go). Records go to one
# file per execution of the job in the run directory; the server ingests them as they grow.
set -u
run_dir='/tmp/d/runs/9'
records="$run_dir/records-${SLURM_JOB_ID}-${SLURM_RESTART_COUNT:-0}.jsonl"
data_dir='/tmp/d'
outcore='/tmp/bin/outcore'
export OUTCORE_RUN_ID=9
echo "outcore: Slurm job $SLURM_JOB_ID on $(hostname) (execution ${SLURM_RESTART_COUNT:-0})" >&2
exec '/tmp/x.test' '-test.run=^$' '--' "$run_dir/config.json" >>"$records"
