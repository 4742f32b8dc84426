package app

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/strata-media/strata/internal/storage/device"
)

// flash_page_cache sends the zero-copy hits from the page cache: without
// flash_sendfile there are none, and the configuration says so.
func TestFlashPageCacheNeedsSendfile(t *testing.T) {
	cfg := testConfig(t)
	cfg.FlashPageCache, cfg.FlashSendfile = true, false
	if err := cfg.Resolve(); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "flash_page_cache") {
		t.Fatalf("Resolve: %v, want ErrConfig naming flash_page_cache", err)
	}
}

// A node with flash_page_cache opens its segment flash with a page cache
// descriptor, and says so; without it, none.
func TestFlashPageCacheOpensTheDescriptor(t *testing.T) {
	for _, on := range []bool{false, true} {
		cfg := testConfig(t)
		cfg.FlashPageCache = on
		n, err := Open(context.Background(), cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		d := n.Description()
		dev, ok := n.eng.Flash().Device().(*device.File)
		if !ok || d.Flash.PageCache != on || dev.PageCache() != on || !dev.Direct() {
			t.Errorf("flash_page_cache %v: description %v, device %v (direct %v)", on, d.Flash.PageCache, ok && dev.PageCache(), ok && dev.Direct())
		}
		if on && !strings.Contains(flashLine(d.Flash), "page cache") {
			t.Errorf("the banner's flash line does not say hits come from the page cache: %q", flashLine(d.Flash))
		}
		if err := n.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
