"""Write outcore's record protocol from a Python training program.

One JSON object per line (docs/API.md, "External systems: the record
protocol"); each line is written whole and flushed, so that a program
killed mid-run loses none of the lines it finished. Standard library only:
copy this file next to your program or put scripts/ on sys.path.

    import outcore_record
    w = outcore_record.Writer()              # $OUTCORE_RECORDS, or path=..., or fd=3
    w.epoch(0, epoch_s=1.9, stages={"sample": 0.4, "train": 1.2},
            bytes_read=123456, train_loss=0.9, train_acc=0.6, val_acc=0.55)
    w.log("warn", "no GPU here")
    w.summary(epochs=1, best_epoch=0, best_val_acc=0.55)
    w.close()

Epochs count from 0. Accuracies are fractions in [0, 1]; seconds and bytes
are never negative; NaN and infinities are refused here (ValueError) as
outcore would refuse them.
"""

import json
import os
import threading

ENV_RECORDS = "OUTCORE_RECORDS"

# Optional fields of an epoch line, as the protocol names them.
_EPOCH_FIELDS = (
    "warmup", "stages", "wall", "batches", "bytes_read", "bytes_needed",
    "rows_from_device", "tiers", "train_loss", "train_acc", "val_acc",
    "test_acc", "eval_s", "counters", "extra",
)
_SUMMARY_FIELDS = (
    "best_val_acc", "test_acc", "mean_epoch_s", "total_s", "prepare_s",
    "prepare_stages", "deviations", "error",
)


class Writer:
    """Writes protocol lines to a path, an open descriptor, or the path in
    $OUTCORE_RECORDS (outcore also passes it as --outcore-records=PATH)."""

    def __init__(self, path=None, fd=None):
        if path is not None and fd is not None:
            raise ValueError("give path or fd, not both")
        if fd is not None:
            self._f = os.fdopen(fd, "ab", buffering=0)
        else:
            if path is None:
                path = os.environ.get(ENV_RECORDS)
                if not path:
                    raise RuntimeError("$%s is not set (is the program run by outcore?)" % ENV_RECORDS)
            self._f = open(path, "ab", buffering=0)
        self._lock = threading.Lock()

    def _line(self, obj):
        # allow_nan=False: NaN and infinities are not JSON, and outcore
        # refuses a line with them.
        data = json.dumps(obj, allow_nan=False, separators=(",", ":")) + "\n"
        with self._lock:
            if self._f is None:
                raise ValueError("writer is closed")
            self._f.write(data.encode("utf-8"))

    def epoch(self, epoch, epoch_s, **fields):
        """One finished epoch: its number (from 0), its seconds (evaluation
        excluded), and any of the optional fields by keyword."""
        unknown = set(fields) - set(_EPOCH_FIELDS)
        if unknown:
            raise TypeError("unknown epoch field(s): %s" % ", ".join(sorted(unknown)))
        obj = {"type": "epoch", "epoch": int(epoch), "epoch_s": float(epoch_s)}
        for k in _EPOCH_FIELDS:
            v = fields.get(k)
            if v is not None:
                obj[k] = v
        self._line(obj)

    def log(self, level, msg):
        """A human-readable event; level is "info", "warn" or "error"."""
        self._line({"type": "log", "level": level, "msg": str(msg)})

    def summary(self, epochs, best_epoch=-1, **fields):
        """The last line of a run the program finished."""
        unknown = set(fields) - set(_SUMMARY_FIELDS)
        if unknown:
            raise TypeError("unknown summary field(s): %s" % ", ".join(sorted(unknown)))
        obj = {"type": "summary", "epochs": int(epochs), "best_epoch": int(best_epoch)}
        for k in _SUMMARY_FIELDS:
            v = fields.get(k)
            if v is not None:
                obj[k] = v
        self._line(obj)

    def close(self):
        with self._lock:
            if self._f is not None:
                self._f.close()
                self._f = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

