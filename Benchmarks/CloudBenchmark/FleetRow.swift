import Foundation

/// One row of the fleet table: a client beside curl, one server, one number
/// in flight, cold or warm connections.
struct FleetRow {
  var server: String
  /// False for a queueing server's rows (`LlamaServerSetup`): shown, with
  /// whether they would meet the goal, but not the goal's reading.
  var goalApplies = true
  var clientName: String
  var inFlight: Int
  /// Whether the row is the runs' cold requests or their warm ones.
  var cold: Bool
  /// The whole runs (cold and warm) of the three clients.
  var clientRun: ClientRun
  var bareRun: ClientRun
  var curlRun: CurlFleet.Run
  var curlCPU: CPUSpan.PerRequest

  var phase: String { cold ? "cold" : "warm" }
  var client: Measurement { cold ? clientRun.cold : clientRun.warm }
  var bare: Measurement { cold ? bareRun.cold : bareRun.warm }
  var curl: Measurement { cold ? curlRun.cold : curlRun.warm }
  var failed: Int { cold ? clientRun.coldFailed : clientRun.warmFailed }

  /// The goal of "Remote clients at scale": median within 2 ms of curl's, p99 within 10%.
  var meetsGoal: Bool {
    failed == 0 && curlRun.failed == 0 && client.median - curl.median <= 2
      && client.percentile(0.99) <= 1.1 * curl.percentile(0.99)
  }

  static func markdown(_ rows: [FleetRow], transport: FleetTransport, modelPath: String) -> String {
    var lines = [
      "## Remote clients at scale beside curl (issue 22, goal: median within 2 ms, p99 within 10%)",
      "",
      "- CPU: \(SSEThroughput.cpuModel()) (lscpu \"Model name\"), "
        + "\(ProcessInfo.processInfo.activeProcessorCount) CPUs shared by client, server and curl",
      "- Date: \(ISO8601DateFormatter().string(from: Date())), "
        + "`cloud-benchmark fleet --local-model \(URL(fileURLWithPath: modelPath).lastPathComponent) "
        + "--transport \(transport.rawValue)`, connection limit "
        + "per host \(FleetBenchmark.inFlight.map { "\(FleetBenchmark.connections(inFlight: $0))" }.joined(separator: " / ")) "
        + "at \(FleetBenchmark.inFlight.map(String.init).joined(separator: " / ")) in flight",
      "- Cold: a fresh client sends N at once (each opens its connection); warm: each of the N callers then "
        + "sends \(FleetBenchmark.warmEach) more in a row. curl: N processes released together, "
        + "\(1 + FleetBenchmark.warmEach) requests each in a row on one connection (the first cold). "
        + "Deadline \(FleetBenchmark.deadline.components.seconds) s; latency per request in ms.",
      "- in flight: mean requests in flight (Σ latency / first start to last end), client / curl; req/s over the "
        + "run (\(1 + FleetBenchmark.warmEach)N requests); CPU µs per request over the run: client process / bare URLSession process / "
        + "curl processes / server process.",
      "",
      "| server | client | N | in flight | client median | curl median | Δ median | client p99 | curl p99 "
        + "| p99 ratio | bare median / p99 | req/s client / bare / curl | CPU µs/req client / bare / curl / server "
        + "| failed | goal |",
      "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for row in rows {
      let cells = [
        row.server, row.clientName, "\(row.inFlight) \(row.phase)",
        "\(f(row.clientRun.meanInFlight, 0)) / \(f(row.curlRun.meanInFlight, 0))",
        f(row.client.median), f(row.curl.median), f(row.client.median - row.curl.median),
        f(row.client.percentile(0.99)), f(row.curl.percentile(0.99)),
        f(row.client.percentile(0.99) / row.curl.percentile(0.99)),
        "\(f(row.bare.median)) / \(f(row.bare.percentile(0.99)))",
        "\(f(row.clientRun.throughput, 0)) / \(f(row.bareRun.throughput, 0)) / \(f(row.curlRun.throughput, 0))",
        "\(f(row.clientRun.cpu.own, 0)) / \(f(row.bareRun.cpu.own, 0)) / \(f(row.curlCPU.children, 0)) / "
          + f(row.clientRun.cpu.server, 0),
        "\(row.failed)" + (row.curlRun.failed > 0 ? " (curl \(row.curlRun.failed))" : ""),
        goal(row.meetsGoal, applies: row.goalApplies),
      ]
      lines.append("| " + cells.joined(separator: " | ") + " |")
    }
    return lines.joined(separator: "\n")
  }

  /// Per server, client, N and phase over `FLEET_ROUNDS` rounds: each
  /// round's Δ median and p99 ratio, their medians, and the goal read on those.
  static func pairedMarkdown(_ rows: [FleetRow]) -> String {
    var lines = [
      "Paired rounds (curl first in odd rounds): per-round Δ median (ms) and p99 ratio, and their medians",
      "",
      "| server | client | N | rounds | Δ median per round | median Δ | p99 ratio per round | median p99 ratio | goal |",
      "| --- | --- | ---: | ---: | --- | ---: | --- | ---: | --- |",
    ]
    var order: [String] = []
    var groups: [String: [FleetRow]] = [:]
    for row in rows {
      let key = "\(row.server) | \(row.clientName) | \(row.inFlight) \(row.phase)"
      if groups[key] == nil { order.append(key) }
      groups[key, default: []].append(row)
    }
    for key in order {
      let group = groups[key] ?? []
      let deltas = group.map { $0.client.median - $0.curl.median }
      let ratios = group.map { $0.client.percentile(0.99) / $0.curl.percentile(0.99) }
      let failed = group.contains { $0.failed > 0 || $0.curlRun.failed > 0 }
      let delta = Measurement(latencies: deltas, wall: 0).median
      let ratio = Measurement(latencies: ratios, wall: 0).median
      let met = !failed && delta <= 2 && ratio <= 1.1
      let applies = group.allSatisfy(\.goalApplies)
      lines.append(
        "| \(key) | \(group.count) | \(deltas.map { f($0) }.joined(separator: ", ")) | \(f(delta)) | "
          + "\(ratios.map { f($0) }.joined(separator: ", ")) | \(f(ratio)) | \(goal(met, applies: applies)) |")
    }
    return lines.joined(separator: "\n")
  }

  /// "met"/"missed", or for a queueing server's row what it would read,
  /// marked as not the goal's.
  private static func goal(_ met: Bool, applies: Bool) -> String {
    applies ? (met ? "met" : "missed") : (met ? "(queueing; within)" : "(queueing; outside)")
  }

  private static func f(_ value: Double, _ digits: Int = 2) -> String {
    value.isNaN ? "–" : String(format: "%.\(digits)f", value)
  }
}
