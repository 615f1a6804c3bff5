package osutil

import (
	"fmt"
	"os"
	"path/filepath"
)

// BlockStatFile is the sysfs stat file of the block device holding path
// (/sys/dev/block/MAJ:MIN/stat: the partition's when path is on one). It
// fails where the file system has no block device (tmpfs, overlay).
func BlockStatFile(path string) (string, error) {
	dir, err := sysBlockDir(path)
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "stat"))
	}
	if err != nil {
		return "", fmt.Errorf("block device of %s: %w", path, err)
	}
	return filepath.Join(dir, "stat"), nil
}

// ReadBlockCounters reads the stat file of a block device (BlockStatFile).
func ReadBlockCounters(file string) (BlockCounters, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return BlockCounters{}, err
	}
	return ParseBlockStat(b)
}
