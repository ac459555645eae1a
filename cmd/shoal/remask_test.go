package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestMaskedTargetKeepsWhatFollowsIt guards the text after a masked
// password: the output filter must not take a closing quote, a comma or the
// rest of a query into the mask, which broke --json.
func TestMaskedTargetKeepsWhatFollowsIt(t *testing.T) {
	const secret = "t0ken-S3cret"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("1\n")) }))
	defer srv.Close()
	for _, target := range []string{
		srv.URL + "/?token=" + secret,
		srv.URL + "/?token=" + secret + "&x=1",
	} {
		rep, r := benchTarget(t, target, "--only", "transport")
		if want := strings.ReplaceAll(target, secret, redactedWord); rep.Target != want {
			t.Errorf("report's target %q, want %q", rep.Target, want)
		}
		if strings.Contains(r.stdout+r.stderr, secret) {
			t.Errorf("password printed:\n%s\n%s", r.stdout, r.stderr)
		}
	}

	// A key=value target whose password comes last, in JSON and in the
	// verdict's quoted sweep command.
	tg, err := parseTarget("host=127.0.0.1 user=u password=" + secret)
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(map[string]string{"target": tg.Redacted})
	for _, text := range []string{
		string(doc) + "\n",
		"    shoal sweep --target " + shellQuote(tg.Redacted) + "\n",
	} {
		var b bytes.Buffer
		fmt.Fprint(scrubWriter{&b, tg}, text)
		if b.String() != text {
			t.Errorf("scrubWriter wrote\n%s\nwant\n%s", b.String(), text)
		}
	}

	// A key=value target split by the shell: the stray argument is quoted
	// whole, its password masked.
	r := runShoal(t, "bench", "--target", "host=127.0.0.1", "password="+secret, "dbname=d")
	r.wantCode(t, exitUsage)
	if want := `unexpected argument "password=` + redactedWord + `"`; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %s:\n%s", want, r.stderr)
	}
}
