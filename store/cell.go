package store

import "strings"

// NamedAxes are the axes a grid names (experiments/grid.AxisNames, with
// "batch" for batch_size) whose values a run keeps in columns of its own;
// the ids axis (grid.ConfigOnlyAxes) is kept in the configuration only
// ("ids"), so its cell is read from there as a path axis's is.
// Every other key under a grid's "axes" is a configuration path
// ("device_mem", "options.window"), whose value a run keeps only in its
// configuration: its cell on those axes (Run.Cell) is derived from
// config_json by runCellJSON, never stored twice.
var NamedAxes = []string{"repeat", "system", "model", "feature_dim", "batch_size", "batch", "fanout", "compute", "mem_limit"}

// runCellJSON is a run's cell on its grid's path axes, read from its
// configuration: a JSON object of path → value as the configuration has
// it ({"device_mem":"2GiB","options.window":"4"}; a path is also the
// configuration's JSON path, "$.options.window"), "" when the grid has
// no path axes. (The space in "config_json ," keeps runColsBrief's
// replacement of the column off it.)
var runCellJSON = `coalesce((SELECT CASE WHEN count(*) = 0 THEN '' ELSE json_group_object(a.key, json_extract(runs.config_json , '$.' || a.key)) END
	FROM experiments x, json_each(x.grid_json, '$.axes') a
	WHERE x.id = runs.experiment_id AND json_valid(x.grid_json) AND json_valid(runs.config_json)
	AND a.key NOT IN ('` + strings.Join(NamedAxes, "', '") + `')), '')`
