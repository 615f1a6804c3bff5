package dataset

import (
	"os"
	"path/filepath"
)

// DataDirEnv names the environment variable that sets the data directory.
const DataDirEnv = "OUTCORE_DATA"

// ResolveDataDir returns the data directory: flagValue when set, else
// $OUTCORE_DATA, else $XDG_DATA_HOME/outcore, else ~/.local/share/outcore.
// Datasets live by name under DatasetsDir of it. A relative directory is
// made absolute against the working directory here, once: the runs'
// paths are stored and handed to training processes that start in their
// own run folders, where a relative one would name another place.
func ResolveDataDir(flagValue string) string {
	dir := resolveDataDir(flagValue)
	if a, err := filepath.Abs(dir); err == nil {
		return a
	}
	return dir // the working directory cannot be known: the error shows where the path is used
}

func resolveDataDir(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if v := os.Getenv(DataDirEnv); v != "" {
		return v
	}
	if v := os.Getenv("XDG_DATA_HOME"); v != "" {
		return filepath.Join(v, "outcore")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "outcore")
	}
	return filepath.Join(os.TempDir(), "outcore")
}

// DatasetsDir is the folder under a data directory that holds one folder per dataset.
func DatasetsDir(dataDir string) string { return filepath.Join(dataDir, "datasets") }
