package vocab

// RefusedCell is a grid cell skipped at creation (the grid language's
// and the store's: experiments/grid and store alias it): it could not start
// (its memory limit is below the variant's floor on its dataset).
type RefusedCell struct {
	Seq           int    `json:"seq"`
	System        string `json:"system"`
	Dataset       string `json:"dataset"`
	Model         string `json:"model,omitempty"`
	MemLimit      string `json:"mem_limit"` // the grid's value ("64MiB", "25%")
	MemLimitBytes int64  `json:"mem_limit_bytes"`
	NeedBytes     int64  `json:"need_bytes"`
	FeatureDim    int    `json:"feature_dim,omitempty"`
	BatchSize     int    `json:"batch_size,omitempty"`
	Fanout        string `json:"fanout,omitempty"`
	Repeat        int    `json:"repeat"`
	Reason        string `json:"reason"`
}
