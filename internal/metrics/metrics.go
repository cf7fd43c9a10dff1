// Package metrics holds boris's Prometheus collectors. Labels carry tool
// names and outcomes only: never a path, a command or a token.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics implements the observers of the tools, server and session
// packages on one registry.
type Metrics struct {
	reg          *prometheus.Registry
	toolCalls    *prometheus.CounterVec
	toolDuration *prometheus.HistogramVec
	sessions     prometheus.Gauge
	tasks        prometheus.Gauge
	timeouts     prometheus.Counter
	requests     *prometheus.CounterVec
	sandbox      *prometheus.GaugeVec
	rules        *prometheus.CounterVec
}

// New registers boris's collectors, the build info, and the Go runtime and
// process collectors on a fresh registry.
func New(version string) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "boris_tool_calls_total",
			Help: "Tool calls by tool and outcome (ok, tool_error, protocol_error).",
		}, []string{"tool", "outcome"}),
		toolDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "boris_tool_call_duration_seconds",
			Help:    "Duration of tool calls.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600},
		}, []string{"tool"}),
		sessions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "boris_sessions_active",
			Help: "Sessions currently open (default, minted and Mcp-Session-Id ones).",
		}),
		tasks: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "boris_background_tasks_running",
			Help: "Background bash tasks currently running.",
		}),
		timeouts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "boris_bash_timeouts_total",
			Help: "Foreground bash commands terminated by their timeout.",
		}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "boris_mcp_requests_total",
			Help: "MCP requests by method and protocol era (stateless: 2026-07-28 and later; handshake: the revisions before).",
		}, []string{"method", "era"}),
		sandbox: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "boris_sandbox_enforced",
			Help: "1 when bash commands run under the Landlock sandbox (labels: the kernel's Landlock ABI, the TCP policy, whether signals and abstract sockets are scoped), 0 when the sandbox is off.",
		}, []string{"landlock_abi", "net", "scoped"}),
		rules: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "boris_rule_decisions_total",
			Help: "Decisions of the command rules (--rules) by decision (allow, ask, forbid), what was judged (command: a command line before it runs; path: a file tool's path; exec: one program as it starts) and, for ask, the answer (approved, declined, unanswered, unavailable; \"\" otherwise).",
		}, []string{"decision", "stage", "answer"}),
	}
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "boris_build_info",
		Help:        "Build information; the value is always 1.",
		ConstLabels: prometheus.Labels{"version": version},
	})
	build.Set(1)
	m.reg.MustRegister(m.toolCalls, m.toolDuration, m.sessions, m.tasks, m.timeouts, m.requests, m.sandbox, m.rules, build,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// Handler serves the Prometheus exposition.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// ToolCall records one tool call.
func (m *Metrics) ToolCall(tool, outcome string, d time.Duration) {
	m.toolCalls.WithLabelValues(tool, outcome).Inc()
	m.toolDuration.WithLabelValues(tool).Observe(d.Seconds())
}

// RuleDecision counts one decision of the command rules.
func (m *Metrics) RuleDecision(decision, stage, answer string) {
	m.rules.WithLabelValues(decision, stage, answer).Inc()
}

// BashTimeout records a foreground command ended by its timeout.
func (m *Metrics) BashTimeout() { m.timeouts.Inc() }

// SessionOpened and SessionClosed track open sessions.
func (m *Metrics) SessionOpened() { m.sessions.Inc() }

// SessionClosed records a session's end.
func (m *Metrics) SessionClosed() { m.sessions.Dec() }

// TaskChange tracks running background tasks (+1 on start, -1 on end).
func (m *Metrics) TaskChange(delta int) { m.tasks.Add(float64(delta)) }

// Request counts one MCP request by method and protocol era.
func (m *Metrics) Request(method, era string) { m.requests.WithLabelValues(method, era).Inc() }

// SandboxEnforced records what the sandbox enforces; abi 0 means it is off.
func (m *Metrics) SandboxEnforced(abi int, net string, scoped bool) {
	if abi == 0 {
		m.sandbox.WithLabelValues("0", "off", "false").Set(0)
		return
	}
	m.sandbox.WithLabelValues(strconv.Itoa(abi), net, strconv.FormatBool(scoped)).Set(1)
}
