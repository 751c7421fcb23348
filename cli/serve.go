package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/diagnose"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/server"
)

type serveOptions struct {
	Node                  string
	Listen                string
	InternalListen        string
	Advertise             string
	UnsafePublicAdvertise bool
}

func serveCommand(g *globals) *cli.Command {
	o := &serveOptions{}
	return &cli.Command{
		Name:        "serve",
		Usage:       "run a node: check the bucket, take the node lease, serve",
		Description: "Exits 3 with SELF-FENCE: <reason> when the node lease is lost; run it under a supervisor that restarts it.\n\n" + envTable(),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "node", Usage: "node name (default: host name)", Sources: cli.EnvVars("CELLD_NODE"), Destination: &o.Node},
			&cli.StringFlag{Name: "listen", Usage: "public listener", Value: "127.0.0.1:8080", Sources: cli.EnvVars("CELLD_ADDR"), Destination: &o.Listen},
			&cli.StringFlag{Name: "internal-listen", Usage: "internal listener (peers, /state)", Value: "127.0.0.1:8081", Sources: cli.EnvVars("CELLD_INTERNAL_ADDR"), Destination: &o.InternalListen},
			&cli.StringFlag{Name: "advertise", Usage: "internal address peers reach this node at (default: the internal listener)", Sources: cli.EnvVars("CELLD_ADVERTISE"), Destination: &o.Advertise},
			&cli.BoolFlag{Name: "unsafe-public-advertise", Usage: "allow --advertise to be a public IP address (peer traffic is signed, not encrypted)", Destination: &o.UnsafePublicAdvertise},
		},
		Action: func(ctx context.Context, cmd *cli.Command) (err error) {
			if err := checkEnv(os.Environ()); err != nil {
				return err
			}
			ls, err := readLogSettings()
			if err != nil {
				return err
			}
			log := ls.logger(cmd.Root().ErrWriter)
			// In JSON mode the outcome is the log's last line, not main's.
			defer func() { err = ls.reportJSON(log, err) }()
			if err := checkAdvertise(o, cmd.IsSet("internal-listen")); err != nil {
				return err
			}
			ttl, err := envInt("CELLD_TTL_MS")
			if err != nil {
				return err
			}
			idle, err := envInt("CELLD_IDLE_EVICT_S")
			if err != nil {
				return err
			}
			queueLeaseMS, err := envInt("CELLD_QUEUE_LEASE_MS")
			if err != nil {
				return err
			}
			maxResident, err := envInt("CELLD_MAX_RESIDENT_CELLS")
			if err != nil {
				return err
			}
			retention, err := envInt("CELLD_LTX_RETENTION_SECS")
			if err != nil {
				return err
			}
			hibernate, err := envInt("CELLD_HIBERNATE_S")
			if err != nil {
				return err
			}
			if hibernate == 0 {
				hibernate = -1 // never
			}
			maxSockets, err := envInt("CELLD_MAX_WEBSOCKETS")
			if err != nil {
				return err
			}
			wakerTick, err := envInt("CELLD_WAKER_TICK_MS")
			if err != nil {
				return err
			}
			gcFloor, err := envInt("CELLD_GC_HEAP_MIN_MB")
			if err != nil {
				return err
			}
			defer tuneGC(gcFloor)()
			skewMargin, err := envInt("CELLD_SKEW_MARGIN_MS")
			if err != nil {
				return err
			}
			maxCellMB, err := envInt("CELLD_MAX_CELL_MB")
			if err != nil {
				return err
			}
			maxBodyMB, err := envInt("CELLD_MAX_BODY_MB")
			if err != nil {
				return err
			}
			bodyMemMB, err := envInt("CELLD_BODY_MEMORY_MB")
			if err != nil {
				return err
			}
			if bodyMemMB < maxBodyMB {
				return usageErr("CELLD_BODY_MEMORY_MB=%d is below CELLD_MAX_BODY_MB=%d: a body of the largest size would never fit", bodyMemMB, maxBodyMB)
			}
			takeoverMS, err := envInt("CELLD_TAKEOVER_WAIT_MS")
			if err != nil {
				return err
			}
			takeoverWait := time.Duration(takeoverMS) * time.Millisecond
			if takeoverWait == 0 {
				takeoverWait = -1 // no wait
			}
			maxConns, err := envInt("CELLD_MAX_CONNS")
			if err != nil {
				return err
			}
			maxOpen, err := envInt("CELLD_MAX_OPEN_CELLS")
			if err != nil {
				return err
			}
			releases, err := envInt("CELLD_RELEASES")
			if err != nil {
				return err
			}
			drainMS, err := envInt("CELLD_SHUTDOWN_DRAIN_MS")
			if err != nil {
				return err
			}
			assetCache, err := envInt("CELLD_ASSET_CACHE_BYTES")
			if err != nil {
				return err
			}
			fleetUpload, err := envInt("CELLD_FLEET_UPLOAD_MS")
			if err != nil {
				return err
			}
			fleetTransfer, err := envInt("CELLD_FLEET_TRANSFER_MS")
			if err != nil {
				return err
			}
			recoveryRetry, err := envInt("CELLD_RECOVERY_RETRY_MS")
			if err != nil {
				return err
			}
			recoveryRetries, err := envInt("CELLD_RECOVERY_RETRIES")
			if err != nil {
				return err
			}
			cacheBytes, err := envInt("CELLD_CACHE_BYTES")
			if err != nil {
				return err
			}
			if o.Node == "" {
				if o.Node, err = os.Hostname(); err != nil {
					return usageErr("no --node given and the host name is unknown: %v", err)
				}
			}
			if err := checkNodeName(o.Node); err != nil {
				return err
			}
			stateDir := os.Getenv("CELLD_WATCH")
			if stateDir == "" {
				stateDir = stateDirFor(o.Node)
			}
			unlock, err := lockStateDir(stateDir)
			if err != nil {
				return err
			}
			defer unlock()
			// Both addresses are bound before the bucket is touched: a taken
			// port fails here with nothing written.
			pub, err := server.Listen(o.Listen, "CELLD_ADDR / --listen")
			if err != nil {
				return usageErr("%v", err)
			}
			internal, err := server.Listen(o.InternalListen, "CELLD_INTERNAL_ADDR / --internal-listen")
			if err != nil {
				pub.Close()
				return usageErr("%v", err)
			}
			s, err := g.openStore()
			if err != nil {
				pub.Close()
				internal.Close()
				return err
			}
			err = server.Run(ctx, server.Options{
				Store: s, Node: o.Node, Listen: o.Listen, InternalListen: o.InternalListen, Advertise: o.Advertise,
				Version: cmd.Root().Version, TTL: time.Duration(ttl) * time.Millisecond, Logger: log, WaitForPrevious: true,
				StateDir: stateDir, IdleEvict: time.Duration(idle) * time.Second, MaxResident: int(maxResident),
				QueueLease:   time.Duration(queueLeaseMS) * time.Millisecond,
				LTXRetention: time.Duration(retention) * time.Second,
				Releases:     int(releases), DrainTimeout: time.Duration(drainMS) * time.Millisecond,
				Builtins: builtinKinds, Hibernate: time.Duration(hibernate) * time.Second,
				MaxCellBytes: maxCellMB << 20, SkewMargin: time.Duration(skewMargin) * time.Millisecond,
				AssetCacheBytes: assetCache, AssetCacheDir: os.Getenv("CELLD_ASSET_CACHE_DIR"),
				CacheBytes: int64(cacheBytes),
				WakerTick:  time.Duration(wakerTick) * time.Millisecond,
				Listener:   pub, InternalListener: internal,
				MaxWebSockets:  int(maxSockets),
				AccessLog:      os.Getenv("CELLD_ACCESS_LOG") == "1",
				MaxRequestBody: maxBodyMB << 20, BodyMemory: bodyMemMB << 20, MaxConns: int(maxConns), MaxOpenCells: int(maxOpen),
				TakeoverWait:  takeoverWait,
				Durability:    strings.TrimSpace(os.Getenv("CELLD_DURABILITY")),
				FleetUpload:   time.Duration(fleetUpload) * time.Millisecond,
				FleetTransfer: time.Duration(fleetTransfer) * time.Millisecond,
				RecoveryRetry: time.Duration(recoveryRetry) * time.Millisecond, RecoveryRetries: int(recoveryRetries),
			})
			var fe *server.FenceError
			var sf *server.StoreFaultError
			var env *diagnose.EnvError
			switch {
			case errors.As(err, &fe):
				return &Error{Err: err, Code: ExitFenced, Hint: "the node lost its lease; a supervisor should restart it"}
			case errors.As(err, &sf):
				return &Error{Err: err, Code: ExitFailure, Hint: "run celld diagnose against this bucket"}
			case errors.As(err, &env):
				return &Error{Err: env.Err, Code: ExitUsage, Hint: env.Hint}
			case errors.Is(err, fleet.ErrDuplicateNode):
				return &Error{Err: err, Code: ExitUsage, Hint: "two nodes share a name; set --node (CELLD_NODE) per node"}
			}
			return err
		},
	}
}

// checkAdvertise refuses an advertised address that would expose the
// internal listener (peer and operator routes) on a public IP by accident,
// and an advertised address without an explicit internal listener (the
// default listener is loopback, which peers on other hosts cannot reach).
func checkAdvertise(o *serveOptions, internalSet bool) error {
	if o.Advertise == "" {
		return nil
	}
	if !internalSet {
		return usageErr("--advertise %s needs an explicit --internal-listen (CELLD_INTERNAL_ADDR): the default internal listener is loopback only", o.Advertise)
	}
	host, _, err := net.SplitHostPort(o.Advertise)
	if err != nil {
		return usageErr("--advertise %q: want HOST:PORT (%v)", o.Advertise, err)
	}
	ip := net.ParseIP(host)
	if ip != nil && !ip.IsPrivate() && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() && !o.UnsafePublicAdvertise {
		return &Error{Err: fmt.Errorf("--advertise %s is a public IP address: peer and operator routes would be reachable from the internet", o.Advertise),
			Code: ExitUsage, Hint: "advertise a private address, or pass --unsafe-public-advertise if a firewall protects it"}
	}
	return nil
}
