-- PCIe throughput of the GPUs per second (gpu/: NVML's
-- nvmlDeviceGetPcieThroughput, MB/s summed over the devices): tx GPU to
-- host, rx host to GPU. NULL: no GPU, the counter unsupported, or rows
-- stored before.
ALTER TABLE samples ADD COLUMN gpu_pcie_tx_mbps REAL;
ALTER TABLE samples ADD COLUMN gpu_pcie_rx_mbps REAL;
