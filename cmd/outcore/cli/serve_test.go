package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"outcore/engine/dataset"
	"outcore/experiments/studies"
	"outcore/web"
)

func TestServeFirstStartAndShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("generates the 100 MB default dataset; runs in the full pass")
	}
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, discard, []string{"serve", "--addr", addr, "--data-dir", dir}) }()

	var page string
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := http.Get("http://" + addr + "/experiments")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			page = string(b)
			break
		}
		select {
		case err := <-done:
			t.Fatalf("serve ended: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the dashboard did not come up")
		}
		time.Sleep(200 * time.Millisecond)
	}
	m, err := dataset.ReadMeta(dataset.DatasetsDir(dir) + "/" + defaultDataset)
	if err != nil || m.Source.Preset != defaultPreset {
		t.Fatalf("default dataset: %+v %v", m.Source, err)
	}
	for _, want := range []string{"Ready to start", exampleFile, `value="` + exampleFile + `"`, `value="gids-fig11-window.json"`, `value="helios-fig11-pipeline.json"`} {
		if !strings.Contains(page, want) {
			t.Errorf("first page lacks %q", want)
		}
	}
	// A Host that is not loopback is refused (DNS rebinding).
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/experiments", nil)
	req.Host = "attacker.example:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("foreign Host: %v %v", resp, err)
	}
	// A stream stays open; shutdown must not wait for it.
	stream, err := http.Get("http://" + addr + "/events?scope=experiments")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop within 10 s of the signal")
	}
	// Second start: no new dataset, the example stays.
	if err := firstStart(context.Background(), dir, "", io.Discard, nil); err != nil {
		t.Errorf("second first-start: %v", err)
	}
}

func TestServeRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"--concurrency", "0"}, {"--nope"}, {"extra"}} {
		if err := Run(context.Background(), discard, append([]string{"serve"}, args...)); !errors.Is(err, ErrUsage) {
			t.Errorf("serve %v: %v, want a usage error", args, err)
		}
	}
}

// The papers' micro-experiments land in examples/; a file already there
// (a researcher's edit) is kept.
func TestWritePaperExamples(t *testing.T) {
	dir := t.TempDir()
	edited := []byte(`{"name":"mine","dataset":"default","system":"gids"}`)
	if _, err := web.WriteExample(dir, "gids-fig11-window.json", edited); err != nil {
		t.Fatal(err)
	}
	if err := writePaperExamples(dir, nil); err != nil {
		t.Fatal(err)
	}
	for _, s := range studies.Examples() {
		name := s.ID + ".json"
		b, err := os.ReadFile(filepath.Join(web.ExamplesDir(dir), name))
		if err != nil {
			t.Fatalf("%s not written: %v", name, err)
		}
		want := s.GridFile()
		if name == "gids-fig11-window.json" {
			want = edited
		}
		if !bytes.Equal(b, want) {
			t.Fatalf("%s: %s", name, b)
		}
	}
}
