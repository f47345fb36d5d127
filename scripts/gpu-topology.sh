#!/usr/bin/env bash
# Prints a simulator topology of one control-plane node and N A100 GPU workers (gpu-1 … gpu-N),
# the cluster the scale benchmarks (bench-check.sh, bench-sim.sh) run on.
# Usage: scripts/gpu-topology.sh N > topology.yaml
set -euo pipefail
nodes="${1:?usage: gpu-topology.sh NODES}"
echo "name: bench-$nodes-gpu"
echo "nodes:"
echo "  - {name: control-plane, role: control-plane, capacity: {cpu: 4, memory: 16Gi}}"
for i in $(seq "$nodes"); do
  echo "  - name: gpu-$i"
  echo "    labels: {nvidia.com/gpu.present: \"true\", feature.node.kubernetes.io/pci-10de.present: \"true\"}"
  echo "    capacity: {cpu: 12, memory: 170Gi, pods: 110, ephemeral-storage: 200Gi}"
  echo "    gpu: {model: A100-80GB, count: 1}"
done
