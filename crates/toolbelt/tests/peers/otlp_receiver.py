"""A loopback OTLP/HTTP receiver (protobuf), decoding what it gets with the official
OpenTelemetry protobuf classes: each export request becomes one JSON line in OUT
({"signal": "traces"|"metrics", "body": <the request as protobuf's JSON mapping>}).

Usage: otlp_receiver.py OUT
Prints the port it listens on (127.0.0.1), then serves until killed.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

SIGNALS = {
    "/v1/traces": ("traces", ExportTraceServiceRequest, ExportTraceServiceResponse),
    "/v1/metrics": ("metrics", ExportMetricsServiceRequest, ExportMetricsServiceResponse),
}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 - the http.server name
        signal = SIGNALS.get(self.path)
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if signal is None or self.headers.get("Content-Type") != "application/x-protobuf":
            self.send_response(404)
            self.end_headers()
            return
        name, request_type, response_type = signal
        request = request_type()
        request.ParseFromString(body)
        with open(sys.argv[1], "a") as out:
            out.write(json.dumps({"signal": name, "headers": {k.lower(): v for k, v in self.headers.items()},
                                  "body": MessageToDict(request)}) + "\n")
        reply = response_type().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
