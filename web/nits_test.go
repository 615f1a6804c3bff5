package web

import (
	"archive/zip"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"outcore/store"
)

// The smaller findings of issue 33, each against a live server.

// TestLoginBackoffHoldsForParallelGuesses: wrong tokens sent at once
// from one address get at most FreeLoginFailures answers 401: the
// back-off is decided and the failure counted in one step.
func TestLoginBackoffHoldsForParallelGuesses(t *testing.T) {
	ls := serveAttacked(t, withToken(t))
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := ls.do(t, "GET", "/api/csrf", map[string]string{"Authorization": fmt.Sprintf("Bearer guess-%03d-xxxxxxxxxxxxxxxx", i)}, "")
			mu.Lock()
			counts[resp.StatusCode]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if counts[401] != FreeLoginFailures || counts[429] != 40-FreeLoginFailures {
		t.Errorf("40 wrong tokens at once: %v, want %d answered 401 and the rest 429", counts, FreeLoginFailures)
	}
}

// TestRefusalsCarrySecurityHeaders: the answers the HTTP server itself
// makes (an over-long head, a body announced with Expect: 100-continue
// over the limit) carry the security headers too.
func TestRefusalsCarrySecurityHeaders(t *testing.T) {
	ls := serveAttacked(t, nil)
	for what, req := range map[string]string{
		"431": "GET /api/csrf HTTP/1.1\r\nHost: localhost\r\nX-Pad: " + strings.Repeat("a", 10<<10) + "\r\n\r\n",
		// (the client sends its body after "100 Continue", as curl does)
		"413": "POST /api/experiments HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nContent-Length: 5242880\r\n\r\n" + strings.Repeat(" ", 9000),
	} {
		got := ls.raw(t, req)
		if i := strings.Index(got, "HTTP/1.1 "+what); i < 0 {
			t.Errorf("%s: %.300q", what, got)
		} else if !strings.Contains(got[i:], "Content-Security-Policy") || !strings.Contains(got[i:], "X-Frame-Options") {
			t.Errorf("%s without the security headers: %.500q", what, got)
		}
	}
}

// TestRunsListRefusesUnknownParameters: /runs takes q alone; any other
// parameter is refused (400) naming it.
func TestRunsListRefusesUnknownParameters(t *testing.T) {
	ls := serveAttacked(t, nil)
	for path, want := range map[string]int{"/runs": 200, "/runs?q=system%3Dpyg%2B": 200, "/runs?status=oom": 400, "/runs?q=&limit=5": 400} {
		resp, body := ls.do(t, "GET", path, nil, "")
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
		if want == 400 && !strings.Contains(body, "unknown parameter") {
			t.Errorf("GET %s: 400 without naming the parameter: %.300s", path, body)
		}
	}
}

// TestBundleReadmeEscapesNames: a stored name with an escape sequence or
// a bidi override (older databases, from before names were checked) is
// written escaped into the bundle's README.
func TestBundleReadmeEscapesNames(t *testing.T) {
	ls := serveAttacked(t, nil)
	e := ls.create(`{"name":"b","dataset":"tiny","axes":{"system":["pyg+"],"mem_limit":["none"]}}`)
	// As an older outcore stored it: past today's checks (store.SetExperimentMeta).
	db, err := sql.Open("sqlite3", filepath.Join(ls.dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(context.Background(), `UPDATE experiments SET name = ? WHERE id = ?`, "red \x1b[31m alert \u202egpj.exe", e.ID); err != nil {
		t.Fatal(err)
	}
	resp, body := ls.do(t, "GET", fmt.Sprintf("/experiments/%d/bundle.zip", e.ID), nil, "")
	if resp.StatusCode != 200 {
		t.Fatalf("bundle: %d", resp.StatusCode)
	}
	zr, err := zip.NewReader(bytes.NewReader([]byte(body)), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if f.Name != "README.md" {
			continue
		}
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		if bytes.ContainsRune(b, 0x1b) || bytes.ContainsRune(b, 0x202e) || !strings.Contains(string(b), `red \u{1b}[31m alert \u{202e}gpj.exe`) {
			t.Errorf("README's title: %.200q", b)
		}
		return
	}
	t.Error("no README.md in the bundle")
}
