package web

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestExternalOptionsFormInBrowser: in Chromium at 1,280 px, the form's
// external-system options sit under the variants without widening the
// page; ticking the system and typing a value out of range brings the
// grid check's message next to the field through the live preview, and a
// valid pair of values counts its runs. OUTCORE_E2E_SHOTS=DIR keeps the
// screenshot.
func TestExternalOptionsFormInBrowser(t *testing.T) {
	chrome := browserTest(t)
	e := externalEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go e.srv.App().Listener(ln)
	base := "http://" + ln.Addr().String()

	ctx := browser(t, chrome)
	do(t, ctx, chromedp.EmulateViewport(1280, 1000), chromedp.Navigate(base+"/experiments/new"))
	waitJS(t, ctx, 10*time.Second, "the external options", `!!document.getElementById('ext-tiny-sgd-epochs')`)
	js[bool](t, ctx, `(() => { document.querySelectorAll('#variants input').forEach(el => { el.checked = el.value === 'external:tiny-sgd' });
		document.getElementById('repeats').value = '1';
		document.querySelector('#external-options details').open = true; return true })()`)
	typeInto(t, ctx, "ext-tiny-sgd-epochs", "3, 500")
	waitJS(t, ctx, 10*time.Second, "the option's error beside its field",
		`document.getElementById('err-ext-tiny-sgd-epochs').textContent.includes('500 is outside [1, 100]')`)
	if msg := js[string](t, ctx, `document.getElementById('err-variants').textContent`); msg != "" {
		t.Errorf("the option's error is repeated on the variants: %q", msg)
	}
	if w := js[int](t, ctx, `document.documentElement.scrollWidth`); w > 1280 {
		t.Errorf("the form is %d px wide in a 1,280 px window", w)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	nonBlank(t, "the form", shot, 0.05)
	saveShot("external-options-form.png", shot)

	typeInto(t, ctx, "ext-tiny-sgd-epochs", "3, 4")
	lims := js[int](t, ctx, `document.getElementById('mem_limits').value.split(',').filter(s => s.trim()).length`)
	waitJS(t, ctx, 10*time.Second, "the runs of two epoch values",
		fmt.Sprintf(`document.getElementById('preview-runs').textContent === '%d' && document.getElementById('err-ext-tiny-sgd-epochs').textContent === ''`, 2*lims))
}
