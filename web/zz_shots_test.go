package web

import (
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func TestZZShots(t *testing.T) {
	base := os.Getenv("SHOT_BASE")
	if base == "" {
		t.Skip()
	}
	page := browser(t, findChromium())
	shots := map[string]string{"list": "/experiments", "exp": "/experiments/1", "run": "/runs/" + os.Getenv("SHOT_RUN")}
	for name, path := range shots {
		do(t, page, chromedp.Navigate(base+path))
		time.Sleep(2500 * time.Millisecond)
		b, err := chromedp.Run(page, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile("/tmp/zz-"+name+".png", b, 0o644)
	}
	// The form with server-side errors.
	do(t, page, chromedp.Navigate(base+"/experiments/new"), chromedp.WaitVisible(chromedp.ID("create")))
	typeInto(t, page, "mem_limits", "64MiB, lots")
	typeInto(t, page, "repeats", "0")
	do(t, page, chromedp.Click(chromedp.ID("create")))
	time.Sleep(1500 * time.Millisecond)
	b, _ := chromedp.Run(page, chromedp.FullScreenshot(100))
	os.WriteFile("/tmp/zz-form.png", b, 0o644)
}
