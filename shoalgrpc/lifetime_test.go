package shoalgrpc

import (
	"io"
	"testing"
	"time"

	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// A stream that outlives its connection's MaxLifetime goes on working to
// its end: the connection takes no new calls meanwhile, and closes once the
// stream is over.
func TestStreamOutlivesMaxLifetime(t *testing.T) {
	srv := startTestServer(t, 10)
	const lifetime = 100 * time.Millisecond
	p := newTestPool(t, srv.addr, Options{MaxConns: 4, MaxLifetime: lifetime})
	client := testpb.NewTestServiceClient(p)
	ctx := testContext(t, 30*time.Second)

	stream, err := client.FullDuplexCall(ctx)
	if err != nil {
		t.Fatal(err)
	}
	echo := func(i int) {
		t.Helper()
		if err := stream.Send(&testpb.StreamingOutputCallRequest{Payload: &testpb.Payload{Body: []byte{byte(i)}}}); err != nil {
			t.Fatalf("Send %d: %v", i, err)
		}
		resp, err := stream.Recv()
		if err != nil || resp.GetPayload().GetBody()[0] != byte(i) {
			t.Fatalf("Recv %d: %v %v", i, resp, err)
		}
	}
	echo(0)
	time.Sleep(3 * lifetime) // the stream's connection is now past its age

	// A new call goes to a new connection, and the old stream still works.
	if _, err := client.UnaryCall(ctx, &testpb.SimpleRequest{}); err != nil {
		t.Fatalf("UnaryCall after the lifetime: %v", err)
	}
	if s := p.Stats(); s.Dials != 2 || s.Closed != 0 {
		t.Fatalf("after a call past the first connection's lifetime: %+v; want a second dial and the first still open for its stream", s)
	}
	for i := 1; i <= 5; i++ {
		echo(i)
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != io.EOF {
		t.Fatalf("Recv after CloseSend: %v, want io.EOF", err)
	}
	// Both connections are past their age now and carry nothing: both
	// close, the first one too, now that its stream has ended.
	if !waitFor(5*time.Second, func() bool { s := p.Stats(); return s.TotalConns == 0 && s.Closed == 2 }) {
		t.Fatalf("the aged connections did not both close once their calls ended: %+v", p.Stats())
	}
}
