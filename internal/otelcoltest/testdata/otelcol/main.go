// Command otelcol is the smallest OpenTelemetry Collector boris's tests need:
// the OTLP receiver (gRPC and HTTP) and the file exporter, nothing else, so
// spans boris emits can be asserted against a real OTLP implementation.
// internal/otelcoltest builds and starts it; it is not shipped.
package main

import (
	"context"
	"io"
	"os"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
)

// lifelineEnv set to 1 makes the collector stop when its standard input
// reaches end of file.
const lifelineEnv = "OTELCOL_EXIT_ON_STDIN_EOF"

func main() {
	settings := otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{
			Command:     "otelcol",
			Description: "OpenTelemetry Collector for boris's tests (OTLP in, file out)",
			Version:     "boris-test",
		},
		Factories: factories,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory()},
				DefaultScheme:     "file",
			},
		},
	}
	// A test that dies without its cleanup (a -timeout panic, a kill) must
	// not leave a collector behind: the harness hands it the read end of a
	// pipe whose write end only the test process holds, and the collector
	// shuts down gracefully when that end closes.
	ctx := context.Background()
	if os.Getenv(lifelineEnv) == "1" {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		go func() {
			io.Copy(io.Discard, os.Stdin)
			cancel()
		}()
	}
	// Cobra has printed the error.
	if err := otelcol.NewCommand(settings).ExecuteContext(ctx); err != nil {
		os.Exit(1)
	}
}

func factories() (otelcol.Factories, error) {
	receivers, err := otelcol.MakeFactoryMap[receiver.Factory](otlpreceiver.NewFactory())
	if err != nil {
		return otelcol.Factories{}, err
	}
	exporters, err := otelcol.MakeFactoryMap[exporter.Factory](fileexporter.NewFactory())
	if err != nil {
		return otelcol.Factories{}, err
	}
	return otelcol.Factories{
		Receivers: receivers,
		Exporters: exporters,
		Telemetry: otelconftelemetry.NewFactory(),
	}, nil
}
