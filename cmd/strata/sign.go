package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/strata-media/strata/internal/node/app"
	"github.com/strata-media/strata/internal/signedurl"
)

// runSign prints a signed URL (package signedurl) with a key of the
// config file's [[signed_urls.keys]].
func runSign(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sign", "--config FILE [--key ID] [--prefix P] [--ttl D | --expires T] URL", stderr)
	config := fs.String("config", "", "strata serve's TOML config file, holding [[signed_urls.keys]]")
	keyID := fs.String("key", "", "id of the key to sign with (default: the first key)")
	prefix := fs.String("prefix", "", "path prefix the URL grants, e.g. /videos/t1/ for a title's manifest and segments (default: the URL's path only)")
	ttl := fs.Duration("ttl", time.Hour, "how long the URL is valid")
	expires := fs.String("expires", "", "expiry as RFC 3339 (2026-12-01T00:00:00Z), instead of --ttl")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *config == "" || fs.NArg() != 1 {
		fs.Usage()
		return fmt.Errorf("%w: want --config FILE and one URL", errUsage)
	}
	k, err := signingKey(*config, *keyID)
	if err != nil {
		return err
	}
	u, err := url.Parse(fs.Arg(0))
	if err != nil || u.Path == "" || u.Path[0] != '/' {
		return fmt.Errorf("%w: %q is not a URL or an absolute path", errUsage, fs.Arg(0))
	}
	if *prefix != "" && !signedurl.PathUnder(u.Path, *prefix) {
		return fmt.Errorf("%w: the path %s is not under --prefix %s", errUsage, u.Path, *prefix)
	}
	if *prefix != "" && !strings.HasSuffix(*prefix, "/") {
		fmt.Fprintf(stderr, "strata sign: warning: --prefix %s does not end with '/': it also grants the paths that continue its last segment (%s0..., %s-x/...); end it with '/' to grant one directory\n",
			*prefix, *prefix, *prefix)
	}
	exp := time.Now().Add(*ttl)
	if *expires != "" {
		if exp, err = time.Parse(time.RFC3339, *expires); err != nil {
			return fmt.Errorf("%w: --expires: %v", errUsage, err)
		}
	}
	fmt.Fprintln(stdout, signedurl.SignURL(k, u, *prefix, exp))
	return nil
}

// signingKey reads the config file's keys and returns the one named id,
// or the first.
func signingKey(path, id string) (signedurl.Key, error) {
	var cfg app.Config
	if _, err := toml.DecodeFile(path, &cfg); err != nil {
		return signedurl.Key{}, fmt.Errorf("%w: config %s: %v", errUsage, path, err)
	}
	keys, err := cfg.SignedURLs.SigningKeys()
	if err != nil {
		return signedurl.Key{}, usageError(err)
	}
	if len(keys) == 0 {
		return signedurl.Key{}, fmt.Errorf("%w: config %s has no [[signed_urls.keys]]", errUsage, path)
	}
	if id == "" {
		return keys[0], nil
	}
	for _, k := range keys {
		if k.ID == id {
			return k, nil
		}
	}
	return signedurl.Key{}, fmt.Errorf("%w: config %s has no key %q", errUsage, path, id)
}
