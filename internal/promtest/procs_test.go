package promtest

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/syncbuf"
)

// echoServer is a loopback TCP server that sends back what it reads: the
// server the program's pools dial. stop closes it and every connection
// to it, as a server that goes down does.
type echoServer struct {
	ln    net.Listener
	mu    sync.Mutex
	conns map[net.Conn]bool
	done  bool
	wg    sync.WaitGroup
}

func startEcho(t *testing.T) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &echoServer{ln: ln, conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			if s.done {
				s.mu.Unlock()
				c.Close()
				return
			}
			s.conns[c] = true
			s.wg.Add(1)
			s.mu.Unlock()
			go func() {
				defer s.wg.Done()
				io.Copy(c, c)
				c.Close()
			}()
		}
	}()
	t.Cleanup(s.stop)
	return s
}

func (s *echoServer) addr() string { return s.ln.Addr().String() }

func (s *echoServer) stop() {
	s.mu.Lock()
	s.done = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.ln.Close()
	s.wg.Wait()
}

// buildProgram builds shoalload into the test's temporary directory.
func buildProgram(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "shoalload")
	out, err := exec.Command("go", "build", "-o", bin, "./shoalload").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./shoalload: %v\n%s", err, out)
	}
	return bin
}

// process is a program the test started; the test's cleanup ends it.
type process struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *syncbuf.Buffer
	line   string // the first line it printed
}

// start runs bin with args and waits for its first line of output.
func start(t *testing.T, name, bin string, args ...string) *process {
	t.Helper()
	p := &process{name: name, cmd: exec.Command(bin, args...), stderr: &syncbuf.Buffer{}}
	p.cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() { p.end(t) })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, stdout)
	}()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatalf("%s printed nothing; stderr:\n%s", name, p.stderr)
		}
		p.line = l
	case <-time.After(30 * time.Second):
		t.Fatalf("%s printed nothing in 30s; stderr:\n%s", name, p.stderr)
	}
	return p
}

// end asks the program to stop (its stdin closes), and kills it if it has
// not within 10 seconds.
func (p *process) end(t *testing.T) {
	p.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-done
		t.Errorf("%s did not stop within 10s of its stdin closing; killed", p.name)
	}
	if t.Failed() && p.stderr.String() != "" {
		t.Logf("%s's stderr:\n%s", p.name, tail(p.stderr.String(), 40))
	}
}

// startPrometheus runs the Prometheus at bin on a free loopback port with
// config and a data directory of its own, and waits until it is ready. Its
// cleanup stops it (SIGTERM, then SIGKILL after 10s).
func startPrometheus(t *testing.T, bin, config string) string {
	t.Helper()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := loopback(freePort(t))
	cmd := exec.Command(bin,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=warn",
	)
	logs := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("prometheus's log:\n%s", tail(logs.String(), 40))
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		if body, err := httpGet(base + "/-/ready"); err == nil && strings.Contains(body, "Ready") {
			return base
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready in 30s; log:\n%s", tail(logs.String(), 40))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func tail(s string, lines int) string {
	parts := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(parts) > lines {
		parts = parts[len(parts)-lines:]
	}
	return strings.Join(parts, "\n")
}
