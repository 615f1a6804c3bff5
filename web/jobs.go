package web

import (
	"context"
	"errors"
	"fmt"
	"log"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"outcore/engine/dataset"
)

// Jobs runs dataset generations and imports in the background, one at a
// time (they compete for the disk), and remembers the recent ones with
// their progress for the datasets page.
type Jobs struct {
	dataDir string
	root    string // the import folder: imports read nothing outside it
	keep    int
	max     int         // jobs waiting or running at most (0 = keep)
	log     *log.Logger // panics of jobs (nil = discarded)
	ctx     context.Context
	cancel  context.CancelFunc
	run     sync.Mutex // held while a job works: one at a time
	wg      sync.WaitGroup

	mu   sync.Mutex
	next int64
	jobs []*job // newest first
}

type job struct {
	id       int64
	kind     string
	name     string
	started  time.Time
	state    string // waiting, running, done, failed
	percent  float64
	message  string
	link     string // where to go when done (an experiment it created)
	finished bool
}

// Job states.
const (
	JobWaiting = "waiting"
	JobRunning = "running"
	JobDone    = "done"
	JobFailed  = "failed"
)

// JobState is a snapshot of one job.
type JobState struct {
	ID       int64
	Kind     string // "generate" or "import"
	Name     string // the dataset
	State    string
	Percent  float64
	Message  string
	Link     string
	Started  time.Time
	Finished bool
}

// NewJobs runs jobs on the datasets of dataDir, remembering the last keep
// of them; at most keep wait or run (SetMax lowers that).
func NewJobs(dataDir string, keep int) *Jobs {
	ctx, cancel := context.WithCancel(context.Background())
	return &Jobs{dataDir: dataDir, keep: keep, max: keep, ctx: ctx, cancel: cancel}
}

// SetMax sets how many jobs may wait or run at once (at most keep): one
// more is refused with ErrJobsFull.
func (j *Jobs) SetMax(n int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.max = max(1, min(n, j.keep))
}

// ErrJobsFull refuses a job while the queue is full.
var ErrJobsFull = errors.New("dataset job queue full")

// List returns the remembered jobs, newest first.
func (j *Jobs) List() []JobState {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]JobState, len(j.jobs))
	for i, jb := range j.jobs {
		out[i] = JobState{ID: jb.id, Kind: jb.kind, Name: jb.name, State: jb.state, Percent: jb.percent,
			Message: jb.message, Link: jb.link, Started: jb.started, Finished: jb.finished}
	}
	return out
}

// Busy reports whether a job of that dataset name is waiting or running.
func (j *Jobs) Busy(name string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, jb := range j.jobs {
		if jb.name == name && !jb.finished {
			return true
		}
	}
	return false
}

// Wait blocks until every started job has ended.
func (j *Jobs) Wait() { j.wg.Wait() }

// Close cancels the running job and waits for every job to end.
func (j *Jobs) Close() {
	j.cancel()
	j.wg.Wait()
}

// CloseWithin cancels the jobs and waits for them at most d; it reports
// whether they all ended. A job blocked in a system call that ignores
// cancellation (an open of a FIFO, a read of a stalled network mount) is
// left behind rather than holding up a shutdown.
func (j *Jobs) CloseWithin(d time.Duration) bool {
	j.cancel()
	done := make(chan struct{})
	go func() {
		j.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// start registers a job and runs work in the background. work reports
// progress through the writer it is given and returns a link to show when
// done ("" for none).
func (j *Jobs) start(kind, name string, work func(ctx context.Context, progress *progressWriter) (string, error)) (int64, error) {
	// The job outlives the request that started it: keep no bytes of it.
	kind, name = strings.Clone(kind), strings.Clone(name)
	j.mu.Lock()
	pending := 0
	for _, jb := range j.jobs {
		if !jb.finished {
			pending++
		}
	}
	if pending >= j.max {
		j.mu.Unlock()
		return 0, fmt.Errorf("%w: %d dataset jobs are waiting or running, the most this server queues; %s %s was not started: try again when one has finished", ErrJobsFull, pending, kind, name)
	}
	j.next++
	jb := &job{id: j.next, kind: kind, name: name, started: time.Now(), state: JobWaiting, message: "waiting for the job before it"}
	j.jobs = append([]*job{jb}, j.jobs...)
	if len(j.jobs) > j.keep {
		j.jobs = j.jobs[:j.keep]
	}
	j.mu.Unlock()
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		j.run.Lock()
		defer j.run.Unlock()
		j.update(jb, func() { jb.state, jb.message = JobRunning, "starting" })
		pw := &progressWriter{set: func(pct float64, msg string) {
			j.update(jb, func() {
				if pct >= 0 {
					jb.percent = pct
				}
				jb.message = msg
			})
		}}
		if err := j.ctx.Err(); err != nil {
			j.update(jb, func() { jb.finished, jb.state, jb.message = true, JobFailed, "cancelled: the server is stopping" })
			return
		}
		link, err := j.runSafe(jb, work, pw)
		j.update(jb, func() {
			jb.finished = true
			if err != nil {
				jb.state, jb.message = JobFailed, err.Error()
				return
			}
			jb.state, jb.percent, jb.link = JobDone, 100, link
			jb.message = "done"
			if pw.result != "" {
				jb.message = pw.result
			}
		})
	}()
	return jb.id, nil
}

// runSafe runs a job's work; a panic (a bug, or an importer tripped by a
// crafted file) fails the job instead of the server.
func (j *Jobs) runSafe(jb *job, work func(ctx context.Context, progress *progressWriter) (string, error), pw *progressWriter) (link string, err error) {
	defer func() {
		if p := recover(); p != nil {
			if j.log != nil {
				j.log.Printf("dataset job %d (%s %s) panicked: %v\n%s", jb.id, jb.kind, jb.name, p, debug.Stack())
			}
			link, err = "", fmt.Errorf("internal error: %v", p)
		}
	}()
	return work(j.ctx, pw)
}

func (j *Jobs) update(jb *job, f func()) {
	j.mu.Lock()
	defer j.mu.Unlock()
	f()
}

// hook, when set by a test, runs at the start of every job's work.
var jobHook func(kind, name string)

// Generate makes dataset name from a preset's configuration; then, when
// set, runs after (e.g. creating the experiment that waits for the dataset)
// and shows the link it returns.
func (j *Jobs) Generate(name, preset string, cfg dataset.GenConfig, after func(ctx context.Context) (string, error)) (int64, error) {
	name, preset = strings.Clone(name), strings.Clone(preset)
	return j.start("generate", name, func(ctx context.Context, pw *progressWriter) (string, error) {
		if jobHook != nil {
			jobHook("generate", name)
		}
		_, err := dataset.GenerateWith(ctx, dataset.DatasetsDir(j.dataDir), name, cfg,
			dataset.GenOptions{Progress: pw, Preset: preset, NoIndptr: true})
		if err != nil {
			return "", err
		}
		if after == nil {
			return "", nil
		}
		pw.set(100, "dataset ready; creating the experiment")
		return after(ctx)
	})
}

// Import runs an importer over a source folder already checked by the caller.
func (j *Jobs) Import(kind, name, src string) (int64, error) {
	kind, name, src = strings.Clone(kind), strings.Clone(name), strings.Clone(src)
	return j.start("import "+kind, name, func(ctx context.Context, pw *progressWriter) (string, error) {
		if jobHook != nil {
			jobHook("import", name)
		}
		if err := CheckImportTree(j.root, src); err != nil {
			return "", err
		}
		dir := dataset.DatasetsDir(j.dataDir)
		opt := dataset.ImportOptions{Progress: pw}
		var err error
		switch kind {
		case "linqs":
			_, err = dataset.ImportLINQS(ctx, dir, name, src, opt)
		case "ogb":
			_, err = dataset.ImportOGB(ctx, dir, name, src, opt)
		case "npy":
			var srcs dataset.NPYSources
			srcs, err = npySources(src)
			if err == nil {
				_, err = dataset.ImportNPY(ctx, dir, name, srcs, opt)
			}
		default:
			err = fmt.Errorf("unknown import format %q", kind)
		}
		return "", err
	})
}

// Verify checks dataset name's files (dataset.Verify with the features
// scanned) and shows the report's summary as the job's message.
func (j *Jobs) Verify(name string) (int64, error) {
	return j.start("verify", name, func(ctx context.Context, pw *progressWriter) (string, error) {
		pw.set(-1, "reading every file of "+name)
		rep, err := dataset.Verify(filepath.Join(dataset.DatasetsDir(j.dataDir), name), dataset.VerifyOptions{Features: true})
		if err != nil {
			return "", err
		}
		m := rep.Meta
		pw.result = fmt.Sprintf("ok: %d nodes, %d edges, %d-dim features (no NaN or ±Inf), in-degree %d–%d (mean %.1f), %d train / %d val / %d test",
			m.Nodes, m.Edges, m.FeatureDim, rep.MinInDegree, rep.MaxInDegree, rep.MeanInDegree, m.Train, m.Val, m.Test)
		return "", nil
	})
}

// progressWriter turns the status lines a generator or importer writes
// ("\rgenerating x:  42.0% ...") into a percentage and a message.
type progressWriter struct {
	set  func(pct float64, msg string)
	line []byte
	// result, when set by the work, is the message of the finished job.
	result string
}

var percentRE = regexp.MustCompile(`(\d+(?:\.\d+)?)%`)

// Write implements io.Writer.
func (p *progressWriter) Write(b []byte) (int, error) {
	for _, c := range b {
		if c == '\r' || c == '\n' {
			p.flush()
			continue
		}
		p.line = append(p.line, c)
	}
	return len(b), nil
}

func (p *progressWriter) flush() {
	if len(p.line) == 0 {
		return
	}
	msg := string(p.line)
	p.line = p.line[:0]
	pct := -1.0
	if m := percentRE.FindStringSubmatch(msg); m != nil {
		if v, err := strconv.ParseFloat(m[1], 64); err == nil && v <= 100 {
			pct = v
		}
	}
	p.set(pct, msg)
}
