#!/usr/bin/env bash
# GPU-host check of the scaled-out path: real Celery workers, model work on the `gpu` queue, the rest on `default`.
# Trains two systems and builds a pool on bundled UMLS through the workers, in a throwaway KGPOOL_VAR_DIR (SQLite)
# with Celery's filesystem broker (no Redis needed). Prints the systems, the pool, the GPU processes nvidia-smi saw
# (the gpu worker's pool process should be listed) and which worker ran which task.
#   bash bench/gpu_worker_e2e.sh [PYTHON]        # default python3; needs requirements.txt installed
set -u
PY=${1:-python3}
WORK=$(mktemp -d)
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$PWD/bench DJANGO_SETTINGS_MODULE=filesystem_broker_settings \
  KGPOOL_VAR_DIR=$WORK/var KGPOOL_FILESYSTEM_BROKER_DIR=$WORK/broker CELERY_BROKER_URL=filesystem:// \
  CELERY_RESULT_BACKEND=file://$WORK/results MPLBACKEND=Agg PYTHONUNBUFFERED=1
mkdir -p "$WORK/broker/queue" "$WORK/broker/processed" "$WORK/broker/control" "$WORK/results"
$PY manage.py migrate -v 0
$PY manage.py import_kg umls datasets/umls
$PY manage.py sample_test umls --size 100 --seed 1 --name smoke
(command -v nvidia-smi >/dev/null && nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader -l 1 \
  > "$WORK/gpu-apps.log" 2>&1) & SMI=$!
$PY -m celery -A kgpool worker -Q gpu -c 1 -n gpu@%h --loglevel INFO > "$WORK/worker-gpu.log" 2>&1 & GPU_WORKER=$!
$PY -m celery -A kgpool worker -Q default -c 1 -n cpu@%h --loglevel INFO > "$WORK/worker-cpu.log" 2>&1 & CPU_WORKER=$!
trap 'kill $GPU_WORKER $CPU_WORKER $SMI 2>/dev/null' EXIT
sleep 8
timeout 300 $PY manage.py train_model umls distmult --epochs 40 --wait
timeout 300 $PY manage.py train_model umls complex --epochs 40 --wait
timeout 300 $PY manage.py build_pool umls/smoke --systems distmult,complex --depth 10 --wait --timeout 280
$PY manage.py pool_status
echo "== GPU processes (pid, name, memory):"; sort -u "$WORK/gpu-apps.log" 2>/dev/null | head
for worker in gpu cpu; do
  echo "== tasks run by the $worker worker:"
  grep -o "Task [a-z_.]*\[[^]]*\] succeeded in [0-9.]*s" "$WORK/worker-$worker.log" | sed 's/\[[^]]*\]//'
done
