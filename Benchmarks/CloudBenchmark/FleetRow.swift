import Foundation

/// One row of the fleet table: a client beside curl, one server, one number
/// in flight, cold or warm connections.
struct FleetRow {
  var server: String
  var clientName: String
  var inFlight: Int
  var phase: String
  var client: Measurement
  var bare: Measurement
  var curl: Measurement
  /// Connections the client had open to the server after its cold burst.
  var connections: Int
  /// Connections curl opened over its whole run.
  var curlConnections: Int
  var failed: Int
  var curlFailed: Int

  /// Issue 22's goal: median within 2 ms of curl's, p99 within 10%.
  var meetsGoal: Bool {
    failed == 0 && client.median - curl.median <= 2 && client.percentile(0.99) <= 1.1 * curl.percentile(0.99)
  }

  static func markdown(_ rows: [FleetRow]) -> String {
    var lines = [
      "## Remote clients at scale beside curl (issue 22, goal: median within 2 ms, p99 within 10%)",
      "",
      "- CPU: \(SSEThroughput.cpuModel()) (lscpu \"Model name\"), "
        + "\(ProcessInfo.processInfo.activeProcessorCount) CPUs shared by client, server and curl",
      "- Date: \(ISO8601DateFormatter().string(from: Date())), `cloud-benchmark fleet --local-model SmolLM2`",
      "- Cold: a fresh client sends N at once (each opens its connection); warm: 3N more, N in flight. "
        + "curl: one `--parallel --parallel-immediate --parallel-max N` run of 4N, split by `%{num_connects}`. "
        + "Deadline \(FleetBenchmark.deadline.components.seconds) s; latency per request in ms.",
      "",
      "| server | client | N | conn. | client median | curl median | Δ median | client p99 | curl p99 "
        + "| p99 ratio | bare URLSession median / p99 | client failed | goal |",
      "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for row in rows {
      let cells = [
        row.server, row.clientName, "\(row.inFlight) \(row.phase)", "\(row.connections) / \(row.curlConnections)",
        f(row.client.median), f(row.curl.median), f(row.client.median - row.curl.median),
        f(row.client.percentile(0.99)), f(row.curl.percentile(0.99)),
        f(row.client.percentile(0.99) / row.curl.percentile(0.99)),
        "\(f(row.bare.median)) / \(f(row.bare.percentile(0.99)))",
        "\(row.failed)" + (row.curlFailed > 0 ? " (curl \(row.curlFailed))" : ""),
        row.meetsGoal ? "met" : "missed",
      ]
      lines.append("| " + cells.joined(separator: " | ") + " |")
    }
    lines.append("")
    lines.append("conn.: connections the client had open after its cold burst (`ss`) / connections curl opened.")
    return lines.joined(separator: "\n")
  }

  private static func f(_ value: Double) -> String { String(format: "%.2f", value) }
}
