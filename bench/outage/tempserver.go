package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// tempServer is a throwaway PostgreSQL cluster of this program's own: made
// with initdb in a temporary directory, listening on a free loopback port,
// started and stopped at will (the server-down case stops it; nobody else
// uses it), and removed at the end. The superuser is shoal, with a
// password, over SCRAM, as on the shared server, so that a reconnect costs
// what it costs there.
type tempServer struct {
	bin  string // the directory of initdb and postgres
	dir  string // data/, the socket, the server's log
	port int
	cs   string // connection string, as shoal over TCP
	run  *exec.Cmd
	done chan error // the running server's exit
	cred *syscall.Credential
}

// Bounds on the server's commands; a start or stop on an idle loopback
// cluster takes well under a second.
const (
	initdbTimeout = time.Minute
	startTimeout  = 30 * time.Second
	stopTimeout   = 30 * time.Second
)

// tempPassword is the throwaway cluster's superuser password. The cluster
// listens on loopback only and is removed at the end.
const tempPassword = "outage-temp-secret"

// newTempServer makes and starts a throwaway cluster. bin is where initdb
// and postgres are; "" means the newest /usr/lib/postgresql/*/bin, or
// pg_config --bindir. It needs root (the server runs as postgres) or the
// postgres user.
func newTempServer(ctx context.Context, bin string) (_ *tempServer, err error) {
	cred, err := serverUser()
	if err != nil {
		return nil, err
	}
	if bin == "" {
		if bin, err = findPGBin(); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "shoal-outage-pg-")
	if err != nil {
		return nil, err
	}
	s := &tempServer{bin: bin, dir: dir, cred: cred}
	defer func() {
		if err != nil {
			s.remove()
		}
	}()
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, err
		}
	}
	pw := filepath.Join(dir, "pwfile")
	if err := os.WriteFile(pw, []byte(tempPassword+"\n"), 0o600); err != nil {
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(pw, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, err
		}
	}
	ictx, cancel := context.WithTimeout(ctx, initdbTimeout)
	defer cancel()
	cmd := exec.CommandContext(ictx, filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-U", "shoal",
		"--pwfile="+pw, "--auth-host=scram-sha-256", "--auth-local=trust", "-E", "UTF8", "--no-sync")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %v: %s", err, tail(string(out), 1000))
	}
	if s.port, err = freePort(); err != nil {
		return nil, err
	}
	s.cs = fmt.Sprintf("postgres://shoal:%s@127.0.0.1:%d/postgres?sslmode=disable", tempPassword, s.port)
	if _, err := s.start(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// serverUser is the credential the server runs under: postgres when this
// process is root, nil (this process's own) when it is postgres.
func serverUser() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("a throwaway PostgreSQL runs as the postgres user: %v", err)
	}
	if strconv.Itoa(os.Geteuid()) == u.Uid {
		return nil, nil
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("a throwaway PostgreSQL takes root or the postgres user (the server will not run as root, and only root can start it as postgres)")
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// findPGBin returns the directory of the newest installed server.
func findPGBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return pgMajor(dirs[i]) > pgMajor(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, nil
		}
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		d := strings.TrimSpace(string(out))
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("no PostgreSQL server found (looked in /usr/lib/postgresql/*/bin and pg_config --bindir); name its bin directory with -pg-bin")
}

// pgMajor is the version number in /usr/lib/postgresql/VERSION/bin.
func pgMajor(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// freePort returns a loopback port nothing listens on now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// start starts the server and returns once it has answered a query, with
// when it was ready (waitReady).
func (s *tempServer) start(ctx context.Context) (time.Time, error) {
	if s.run != nil {
		return time.Time{}, errors.New("the throwaway server is already running")
	}
	logf, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return time.Time{}, err
	}
	defer logf.Close()
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), "-D", filepath.Join(s.dir, "data"),
		"-c", "listen_addresses=127.0.0.1", "-c", "port="+strconv.Itoa(s.port),
		"-c", "unix_socket_directories="+s.dir, "-c", "max_connections=100",
		"-c", "shared_buffers=32MB", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "autovacuum=off", "-c", "log_min_messages=warning")
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = serverAttr(s.cred)
	if err := cmd.Start(); err != nil {
		return time.Time{}, fmt.Errorf("starting the throwaway server: %w", err)
	}
	s.run, s.done = cmd, make(chan error, 1)
	go func() { s.done <- cmd.Wait() }()
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	ready, err := s.waitReady(ctx)
	if err != nil {
		_ = s.stop()
		return time.Time{}, err
	}
	return ready, nil
}

// readyPoll is how often waitReady tries to connect.
const readyPoll = 5 * time.Millisecond

// waitReady connects every readyPoll until a connection answers a query,
// and returns when the attempt that succeeded began: the server was ready
// by then, and, its previous attempt having failed, had not been for long.
func (s *tempServer) waitReady(ctx context.Context) (time.Time, error) {
	cfg, err := pgx.ParseConfig(s.cs)
	if err != nil {
		return time.Time{}, err
	}
	cfg.RuntimeParams["application_name"] = "shoal-outage-probe"
	for {
		began := time.Now()
		actx, cancel := context.WithTimeout(ctx, time.Second)
		c, err := pgx.ConnectConfig(actx, cfg)
		if err == nil {
			var one int
			err = c.QueryRow(actx, "SELECT 1").Scan(&one)
			_ = c.Close(context.Background())
		}
		cancel()
		if err == nil {
			return began, nil
		}
		select {
		case err := <-s.done:
			s.done <- err
			return time.Time{}, fmt.Errorf("the throwaway server exited while starting (%v): %s", err, s.logTail())
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("the throwaway server did not answer: %w; %s", ctx.Err(), s.logTail())
		case <-time.After(readyPoll):
		}
	}
}

// stop shuts the server down fast (SIGINT: sessions ended, a clean
// shutdown), as pg_ctl stop -m fast does, and waits for it to exit;
// past stopTimeout it is killed.
func (s *tempServer) stop() error {
	if s.run == nil {
		return nil
	}
	defer func() { s.run = nil }()
	_ = s.run.Process.Signal(syscall.SIGINT)
	select {
	case <-s.done:
		return nil
	case <-time.After(stopTimeout):
		_ = s.run.Process.Kill()
		<-s.done
		return fmt.Errorf("the throwaway server did not stop within %v and was killed", stopTimeout)
	}
}

// remove stops the server and deletes its directory.
func (s *tempServer) remove() {
	_ = s.stop()
	_ = os.RemoveAll(s.dir)
}

// logTail is the end of the server's log, for an error.
func (s *tempServer) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
	return "server log: " + tail(string(b), 1000)
}

// tail returns the last n bytes of s, trimmed.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "..." + s[len(s)-n:]
	}
	return s
}
