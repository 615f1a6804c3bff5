package store

import (
	"context"
	"fmt"
	"strings"
)

// Cond is one condition on runs, evaluated by SQLite (RunFilter.Conds,
// ExperimentsWithRuns): Field is a key of RunFields, Op one of =, !=, <,
// <=, >, >= and ~ (contains, case-insensitive), Value a string or a number.
type Cond struct {
	Field string
	Op    string
	Value any
}

// RunFields maps the condition fields to the runs table's columns.
var RunFields = map[string]string{
	"system": "system", "status": "status", "dataset": "dataset", "model": "model", "fanout": "fanout",
	"mem_limit": "mem_limit_bytes", "dim": "feature_dim", "batch": "batch_size", "repeat": "repeat",
	"mean_epoch_s": "mean_epoch_s", "best_val": "best_val_acc", "test_acc": "test_acc", "id": "id",
}

// sqlOps are the SQL of the condition operators.
var sqlOps = map[string]string{"=": "=", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}

// condsSQL is the WHERE clause of conds (joined with AND) and its arguments.
func condsSQL(conds []Cond) ([]string, []any, error) {
	var where []string
	var args []any
	for _, c := range conds {
		col, ok := RunFields[c.Field]
		if !ok {
			return nil, nil, fmt.Errorf("no run field %q", c.Field)
		}
		switch c.Op {
		case "~":
			where = append(where, col+` LIKE ? ESCAPE '\'`)
			v := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(fmt.Sprint(c.Value))
			args = append(args, "%"+v+"%")
		default:
			op, ok := sqlOps[c.Op]
			if !ok {
				return nil, nil, fmt.Errorf("no operator %q", c.Op)
			}
			where = append(where, col+" "+op+" ?")
			args = append(args, c.Value)
		}
	}
	return where, args, nil
}

// ExperimentsWithRuns returns the experiments with at least one current
// run meeting every condition.
func (s *Store) ExperimentsWithRuns(ctx context.Context, conds []Cond) (map[int64]bool, error) {
	where, args, err := condsSQL(conds)
	if err != nil {
		return nil, err
	}
	q := `SELECT DISTINCT experiment_id FROM runs WHERE superseded = 0`
	if len(where) > 0 {
		q += " AND " + strings.Join(where, " AND ")
	}
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("experiments with runs: %w", err)
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}
