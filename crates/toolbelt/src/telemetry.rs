//! OpenTelemetry export: a span per tool call and the call metrics, over OTLP/HTTP
//! (protobuf), off unless the standard `OTEL_*` variables ask for it.
//!
//! * **On and off.** A signal is exported when `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER`
//!   names `otlp`, or when it is unset and an OTLP endpoint is given
//!   (`OTEL_EXPORTER_OTLP_ENDPOINT`, or the signal's own `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` /
//!   `…_METRICS_ENDPOINT`). `none`, or `OTEL_SDK_DISABLED=true`, turns it off. Nothing is set
//!   up otherwise, so a call costs nothing extra.
//! * **What the SDK reads itself**: the endpoints, `OTEL_EXPORTER_OTLP_HEADERS` (an
//!   `Authorization` for a hosted collector), `…_TIMEOUT`, `…_COMPRESSION`,
//!   `OTEL_SERVICE_NAME` (`toolbelt` when unset), `OTEL_RESOURCE_ATTRIBUTES`,
//!   `OTEL_METRIC_EXPORT_INTERVAL`, `OTEL_BSP_*`, `OTEL_TRACES_SAMPLER`.
//! * **The span** of a call is `execute_tool <tool>` with the GenAI conventions'
//!   `gen_ai.operation.name`, `gen_ai.tool.name`, `gen_ai.tool.call.id`, and toolbelt's
//!   `toolbelt.outcome`, `toolbelt.decision` and `toolbelt.decision.source` (who decided),
//!   `toolbelt.approval`, `session.id`, `toolbelt.client.*`; its status is an error when the
//!   model got one. It never carries the input or the output.
//! * **The metrics** are those of `/metrics`, counted the same way: `toolbelt.calls`
//!   {tool, outcome}, `toolbelt.call.duration` (s) {tool}, `toolbelt.decisions` {decision,
//!   source}, `toolbelt.approvals` {answer}; an unknown tool is `(unknown)`.
//! * **Threads.** The SDK batches on threads of its own and sends with a blocking client, so
//!   the calls' threads only queue. [`Telemetry::from_env`] runs before the async runtime
//!   starts and [`Telemetry::shutdown`] after it ends (a blocking client must not be made or
//!   dropped inside one), flushing what is left.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use opentelemetry::metrics::{Counter, Histogram, Meter};
use opentelemetry::trace::{Span as _, SpanKind, Status, Tracer as _, TracerProvider as _};
use opentelemetry::{KeyValue, Value};
use opentelemetry_otlp::{MetricExporter, SpanExporter};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use toolbelt_runtime::metrics::{decision_name, source_kind};
use toolbelt_runtime::{CallObserver, CallReport};

/// The observer the process's runtimes report to, once telemetry is set up.
static OBSERVER: OnceLock<Arc<dyn CallObserver>> = OnceLock::new();

/// The meter gauges are registered with, when metrics are exported.
static METER: OnceLock<Meter> = OnceLock::new();

/// The exporters, for [`flush`] before a process ends on its own.
static PROVIDERS: OnceLock<(Option<SdkTracerProvider>, Option<SdkMeterProvider>)> = OnceLock::new();

/// The label of calls to a tool that does not exist (as `/metrics` has it).
const UNKNOWN: &str = "(unknown)";

/// The longest tool name exported as asked for (an unknown one is the model's text).
const MAX_NAME: usize = 64;

/// The variables that carry a collector's key (`authorization=Bearer%20…`): kept from every
/// command, hook and server toolbelt starts, whether telemetry is on or not.
pub const SECRET_VARS: [&str; 4] = [
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
    "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
];

/// The exporters this process runs; [`Telemetry::shutdown`] flushes them.
pub struct Telemetry {
    tracer: Option<SdkTracerProvider>,
    meter: Option<SdkMeterProvider>,
}

impl Telemetry {
    /// Sets up what the `OTEL_*` variables ask for (see the module docs); `None` when they ask
    /// for nothing, or when it cannot be set up (said on stderr: the command goes on without
    /// it). `front_end` (`cli`, `mcp`, `agent`) becomes the resource's `toolbelt.front_end`.
    /// Call it before the async runtime starts.
    pub fn from_env(front_end: &str) -> Option<Telemetry> {
        let var = |name: &str| std::env::var(name).ok().map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        Self::with_vars(front_end, &var)
    }

    fn with_vars(front_end: &str, var: &dyn Fn(&str) -> Option<String>) -> Option<Telemetry> {
        if var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
            return None;
        }
        let traces = wanted(var, "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
        let metrics = wanted(var, "OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT");
        if !traces && !metrics {
            return None;
        }
        if let Some(protocol) = var("OTEL_EXPORTER_OTLP_PROTOCOL").filter(|p| p != "http/protobuf") {
            tracing::warn!(
                "OTEL_EXPORTER_OTLP_PROTOCOL={protocol} is not supported: toolbelt exports OTLP over HTTP with \
                 protobuf (http/protobuf, port 4318 by default)"
            );
        }
        let mut resource = Resource::builder().with_attributes([
            KeyValue::new("service.version", env!("CARGO_PKG_VERSION")),
            KeyValue::new("toolbelt.front_end", front_end.to_string()),
            KeyValue::new("service.instance.id", crate::replica::name()),
        ]);
        let named = var("OTEL_SERVICE_NAME").is_some()
            || var("OTEL_RESOURCE_ATTRIBUTES")
                .is_some_and(|a| a.split(',').any(|kv| kv.trim().starts_with("service.name=")));
        if !named {
            resource = resource.with_service_name("toolbelt");
        }
        let resource = resource.build();
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            eprintln!("warning: OpenTelemetry {what} are not exported: {e}");
        };
        let tracer = match traces.then(|| SpanExporter::builder().with_http().build()).transpose() {
            Ok(exporter) => exporter.map(|exporter| {
                SdkTracerProvider::builder().with_resource(resource.clone()).with_batch_exporter(exporter).build()
            }),
            Err(e) => {
                fail("traces", &e);
                None
            }
        };
        let meter = match metrics.then(|| MetricExporter::builder().with_http().build()).transpose() {
            Ok(exporter) => exporter.map(|exporter| {
                SdkMeterProvider::builder().with_resource(resource).with_periodic_exporter(exporter).build()
            }),
            Err(e) => {
                fail("metrics", &e);
                None
            }
        };
        if tracer.is_none() && meter.is_none() {
            return None;
        }
        let toolbelt_meter = meter.as_ref().map(|m| {
            use opentelemetry::metrics::MeterProvider as _;
            m.meter("toolbelt")
        });
        if let Some(m) = &toolbelt_meter {
            let _ = METER.set(m.clone());
        }
        let observer = OtelObserver::new(tracer.as_ref().map(|t| t.tracer("toolbelt")), toolbelt_meter);
        let _ = OBSERVER.set(Arc::new(observer));
        let _ = PROVIDERS.set((tracer.clone(), meter.clone()));
        Some(Telemetry { tracer, meter })
    }

    /// Sends what is still waiting and stops the exporters (5 s at most each). Blocking: call
    /// it after the async runtime has ended.
    pub fn shutdown(self) {
        if let Some(tracer) = self.tracer {
            if let Err(e) = tracer.force_flush() {
                tracing::warn!("OpenTelemetry: the last spans could not be sent: {e}");
            }
            let _ = tracer.shutdown_with_timeout(Duration::from_secs(5));
        }
        if let Some(meter) = self.meter
            && let Err(e) = meter.shutdown()
        {
            tracing::warn!("OpenTelemetry: the last metrics could not be sent: {e}");
        }
    }
}

/// Sends what waits (spans, and the metrics as they stand) before the process ends without
/// returning through `main` (on a signal); blocking: call it off the async runtime's threads.
pub fn flush() {
    let Some((tracer, meter)) = PROVIDERS.get() else { return };
    if let Some(tracer) = tracer {
        let _ = tracer.force_flush();
    }
    if let Some(meter) = meter {
        let _ = meter.force_flush();
    }
}

/// Exports a gauge read when metrics are sent (`value` gives its points: labels and value),
/// when metrics are exported; nothing otherwise. For what a server holds (running calls and
/// commands, storage errors).
pub fn gauge(
    name: &'static str,
    description: &'static str,
    value: impl Fn() -> Vec<(Vec<KeyValue>, u64)> + Send + Sync + 'static,
) {
    let Some(meter) = METER.get() else { return };
    let _gauge = meter
        .u64_observable_gauge(name)
        .with_description(description)
        .with_callback(move |observer| {
            for (labels, v) in value() {
                observer.observe(v, &labels);
            }
        })
        .build();
}

/// The observer runtimes built in this process report to, when telemetry is on.
pub fn observer() -> Option<Arc<dyn CallObserver>> {
    OBSERVER.get().cloned()
}

/// Whether a signal is exported: its exporter variable names `otlp`, or is unset while an
/// endpoint is given.
fn wanted(var: &dyn Fn(&str) -> Option<String>, exporter: &str, endpoint: &str) -> bool {
    match var(exporter) {
        Some(list) => {
            let names: Vec<&str> = list.split(',').map(str::trim).collect();
            if let Some(other) = names.iter().find(|n| !matches!(**n, "otlp" | "none")) {
                tracing::warn!("{exporter}={other} is not supported: toolbelt exports otlp (or none)");
            }
            names.contains(&"otlp")
        }
        None => var("OTEL_EXPORTER_OTLP_ENDPOINT").is_some() || var(endpoint).is_some(),
    }
}

/// Spans and counts for each finished call.
struct OtelObserver {
    tracer: Option<SdkTracer>,
    instruments: Option<Instruments>,
}

struct Instruments {
    calls: Counter<u64>,
    duration: Histogram<f64>,
    decisions: Counter<u64>,
    approvals: Counter<u64>,
}

impl OtelObserver {
    fn new(tracer: Option<SdkTracer>, meter: Option<Meter>) -> Self {
        let instruments = meter.map(|meter| Instruments {
            calls: meter.u64_counter("toolbelt.calls").with_description("Tool calls, by tool and outcome").build(),
            duration: meter
                .f64_histogram("toolbelt.call.duration")
                .with_unit("s")
                .with_description("Tool call duration, from arrival to result")
                .with_boundaries(vec![0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 30.0, 120.0])
                .build(),
            decisions: meter
                .u64_counter("toolbelt.decisions")
                .with_description("Permission decisions, by decision and the kind of what made it")
                .build(),
            approvals: meter.u64_counter("toolbelt.approvals").with_description("Answers of people asked").build(),
        });
        Self { tracer, instruments }
    }
}

impl CallObserver for OtelObserver {
    fn call_finished(&self, report: &CallReport<'_>) {
        // A name no tool has is the model's text: neither a span name nor exported as it came.
        let label = if report.known_tool { report.tool.to_string() } else { UNKNOWN.to_string() };
        let asked: String = toolbelt_runtime::audit::redact_text(report.tool).chars().take(MAX_NAME).collect();
        let decision = report.decision.map(|v| (decision_name(v), source_kind(&v.source)));
        if let Some(tracer) = &self.tracer {
            let now = SystemTime::now();
            let mut attributes = vec![
                KeyValue::new("gen_ai.operation.name", "execute_tool"),
                KeyValue::new("gen_ai.tool.name", asked),
                KeyValue::new("gen_ai.tool.call.id", report.call_id.to_string()),
                KeyValue::new("toolbelt.outcome", report.outcome.as_str()),
                KeyValue::new("toolbelt.is_error", report.is_error),
                KeyValue::new("toolbelt.duration_ms", report.duration.as_secs_f64() * 1000.0),
                KeyValue::new("session.id", report.session.to_string()),
                KeyValue::new("toolbelt.client.kind", report.client.kind.as_str()),
            ];
            if let Some((decision, source)) = decision {
                attributes.push(KeyValue::new("toolbelt.decision", decision));
                attributes.push(KeyValue::new("toolbelt.decision.source", source));
            }
            if let Some(answer) = report.approval {
                attributes.push(KeyValue::new("toolbelt.approval", answer));
            }
            for (key, value) in
                [("toolbelt.client.name", &report.client.name), ("toolbelt.client.version", &report.client.version)]
            {
                if let Some(value) = value {
                    attributes.push(KeyValue::new(key, Value::from(value.clone())));
                }
            }
            let mut span = tracer
                .span_builder(format!("execute_tool {label}"))
                .with_kind(SpanKind::Internal)
                .with_start_time(now.checked_sub(report.duration).unwrap_or(now))
                .with_attributes(attributes)
                .start(tracer);
            span.set_status(if report.is_error {
                Status::error(format!("the call ended {}", report.outcome.as_str()))
            } else {
                Status::Ok
            });
            span.end_with_timestamp(now);
        }
        if let Some(instruments) = &self.instruments {
            instruments
                .calls
                .add(1, &[KeyValue::new("tool", label.clone()), KeyValue::new("outcome", report.outcome.as_str())]);
            instruments.duration.record(report.duration.as_secs_f64(), &[KeyValue::new("tool", label)]);
            if let Some((decision, source)) = decision {
                instruments.decisions.add(1, &[KeyValue::new("decision", decision), KeyValue::new("source", source)]);
            }
            if let Some(answer) = report.approval {
                instruments.approvals.add(1, &[KeyValue::new("answer", answer)]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn off_unless_asked() {
        assert!(!wanted(&vars(&[]), "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"));
        let endpoint = vars(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")]);
        assert!(wanted(&endpoint, "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"));
        let none = vars(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"), ("OTEL_METRICS_EXPORTER", "none")]);
        assert!(!wanted(&none, "OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"));
        let otlp = vars(&[("OTEL_TRACES_EXPORTER", "console, otlp")]);
        assert!(wanted(&otlp, "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"));
        let own = vars(&[("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://c:4318/v1/metrics")]);
        assert!(wanted(&own, "OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"));
        assert!(!wanted(&own, "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"));
        let disabled = vars(&[("OTEL_SDK_DISABLED", "true"), ("OTEL_TRACES_EXPORTER", "otlp")]);
        assert!(Telemetry::with_vars("cli", &disabled).is_none());
    }
}
