package shoaletcd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// etcdStarts numbers the etcd processes this test binary starts, to name
// each uniquely.
var etcdStarts atomic.Int64

// startEtcd runs a throwaway single-member etcd on free loopback ports and
// returns its client address and process; the test's end kills it.
//
// A port found free is closed again before etcd binds it, so another
// process (another test's etcd, say) may take it first. Each etcd has a
// name no other has, and is used only once the member answering at its
// address is it; otherwise it is killed and another started on other
// ports.
func startEtcd(t *testing.T) (string, *os.Process) {
	t.Helper()
	bin, err := exec.LookPath("etcd")
	if err != nil {
		if os.Getenv("SHOAL_REQUIRE_SERVICES") == "1" {
			t.Fatalf("no etcd binary on PATH: %v", err)
		}
		t.Skipf("no etcd binary on PATH: %v", err)
	}
	const tries = 5
	for i := 1; ; i++ {
		addr, proc, err := tryEtcd(t, bin)
		if err == nil {
			return addr, proc
		}
		if i == tries {
			t.Fatalf("starting etcd, %d tries: %v", tries, err)
		}
		t.Logf("starting etcd: %v; trying other ports", err)
	}
}

// tryEtcd starts one etcd on ports found free, and returns its client
// address and process once it answers there as itself; otherwise it kills
// it and says why.
func tryEtcd(t *testing.T, bin string) (string, *os.Process, error) {
	port := func() int {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().(*net.TCPAddr).Port
	}
	name := fmt.Sprintf("shoal-test-%d-%d", os.Getpid(), etcdStarts.Add(1))
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	client := fmt.Sprintf("http://127.0.0.1:%d", port())
	peer := fmt.Sprintf("http://127.0.0.1:%d", port())
	logf, err := os.Create(filepath.Join(dir, "etcd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--name", name, "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", name+"="+peer, "--initial-cluster-token", name)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	end := func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		<-exited
		_ = logf.Close()
	}
	addr := client[len("http://"):]
	if err := answersAs(addr, name, exited); err != nil {
		end()
		if errors.Is(err, errEtcdExited) {
			err = fmt.Errorf("%w (%v), its log ending %q", err, waitErr, logTail(logf.Name()))
		}
		return "", nil, fmt.Errorf("etcd %s at %s: %w", name, addr, err)
	}
	t.Cleanup(end)
	return addr, cmd.Process, nil
}

// errEtcdExited is answersAs's error when the etcd it waits on has exited.
var errEtcdExited = errors.New("exited")

// answersAs waits up to 20s for the etcd at addr to answer, and checks
// that it is the single member name: a port taken by another process
// before etcd bound it leaves that one answering there. It stops waiting
// once exited is closed.
func answersAs(addr, name string, exited <-chan struct{}) error {
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{addr},
		DialTimeout: time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return err
	}
	defer c.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		// A read goes through the leader: once it answers, so does the
		// member to the test's requests.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := c.Get(ctx, "ping")
		var r *clientv3.MemberListResponse
		if err == nil {
			r, err = c.MemberList(ctx)
		}
		cancel()
		if err == nil {
			if len(r.Members) != 1 || r.Members[0].Name != name {
				var names []string
				for _, m := range r.Members {
					names = append(names, m.Name)
				}
				return fmt.Errorf("another etcd answers there, with members %q", names)
			}
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("did not answer within 20s: %w", err)
		}
		select {
		case <-exited:
			return errEtcdExited
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// logTail returns the last line of the log at path, at most 300 bytes.
func logTail(path string) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	last := lines[len(lines)-1]
	return last[max(0, len(last)-300):]
}
