import Foundation
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote
import Synchronization

/// A streamed delta costs what it adds, in time and memory ("Large events and tiny chunks").
///
///     cloud-benchmark streaming [BUDGET_SECONDS]
///
/// Each row streams one answer through `GenerativeModelSession.streamResponse`
/// (text) or `streamResponse(to:generating:)` (structured, a JSON document of
/// strings): 200,000 deltas of 1 byte, 2,000 of 8 KiB, and beside each the same
/// text as a single event. The model is scripted in process and makes each
/// delta when the session asks for it, so the figures are the library's own
/// cost (accumulating, snapshots, tool-round bookkeeping, the structured
/// parse), not a server's, a socket's or a buffer's: a loopback SSE server
/// would add its Python JSON encoding and the HTTP path to every one of the
/// 200,000 events. Linear shows as a time per delta in the last tenth of the
/// deltas equal to the first tenth's, and a peak RSS that grows like the
/// single event's. Each row runs in a child process of its own, so that its
/// peak RSS (VmHWM) is its own; a row stops at the budget (60 s by default)
/// and reports how far it got.
enum StreamingCost {
  struct Row: Sendable {
    var structured: Bool
    var deltas: Int
    var deltaBytes: Int
    var totalBytes: Int { deltas * deltaBytes }

    var label: String {
      let kind = structured ? "structured" : "text"
      let size = deltaBytes >= 1024 ? "\(deltaBytes / 1024) KiB" : "\(deltaBytes) B"
      return deltas == 1 ? "\(kind), single event of \(bytes(totalBytes))" : "\(kind), \(grouped(deltas)) × \(size)"
    }

    var arguments: [String] { [structured ? "structured" : "text", "\(deltas)", "\(deltaBytes)"] }
  }

  /// What one row measured (printed by the child as one line).
  struct Figures {
    var deltasDone: Int
    var seconds: Double
    var firstTenthMicroseconds: Double?
    var lastTenthMicroseconds: Double?
    var peakRSSKiB: Int
    var startRSSKiB: Int
    var finished: Bool
    var runs = 1
  }

  static let rows: [Row] = [
    Row(structured: false, deltas: 200_000, deltaBytes: 1),
    Row(structured: false, deltas: 1, deltaBytes: 200_000),
    Row(structured: false, deltas: 2_000, deltaBytes: 8192),
    Row(structured: false, deltas: 1, deltaBytes: 2_000 * 8192),
    Row(structured: true, deltas: 200_000, deltaBytes: 1),
    Row(structured: true, deltas: 1, deltaBytes: 200_000),
    Row(structured: true, deltas: 2_000, deltaBytes: 8192),
    Row(structured: true, deltas: 1, deltaBytes: 2_000 * 8192),
  ]

  /// The parent: every row in child processes, then the Markdown section.
  /// A row runs `repeats` times and reports medians, unless one run took
  /// over 5 s (a row that meets the budget runs once).
  static func run(budget: Double, repeats: Int = 5) throws {
    var results: [(Row, Figures)] = []
    for row in rows {
      var runs: [Figures] = []
      while runs.count < repeats {
        let figures = try runChild(row, budget: budget)
        runs.append(figures)
        if figures.seconds > 5 { break }
      }
      results.append((row, median(runs)))
    }
    print(markdown(results, budget: budget, repeats: repeats))
  }

  private static func runChild(_ row: Row, budget: Double) throws -> Figures {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
    process.arguments = ["streaming-row"] + row.arguments + ["\(budget)"]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last { $0.hasPrefix("ROW ") }
    guard process.terminationStatus == 0, let line, let figures = parse(line) else {
      throw BenchmarkError("the row \(row.label) failed (status \(process.terminationStatus))")
    }
    FileHandle.standardError.write(Data("\(row.label): \(line)\n".utf8))
    return figures
  }

  /// Each figure's median over the runs (one run: itself).
  private static func median(_ runs: [Figures]) -> Figures {
    func middle<T: Comparable>(_ values: [T]) -> T { values.sorted()[values.count / 2] }
    func middle(_ values: [Double?]) -> Double? {
      let known = values.compactMap { $0 }
      return known.isEmpty ? nil : middle(known)
    }
    return Figures(
      deltasDone: middle(runs.map(\.deltasDone)), seconds: middle(runs.map(\.seconds)),
      firstTenthMicroseconds: middle(runs.map(\.firstTenthMicroseconds)),
      lastTenthMicroseconds: middle(runs.map(\.lastTenthMicroseconds)),
      peakRSSKiB: middle(runs.map(\.peakRSSKiB)), startRSSKiB: middle(runs.map(\.startRSSKiB)),
      finished: runs.allSatisfy(\.finished), runs: runs.count)
  }

  /// The child: one row, one line of figures.
  static func runRow(_ arguments: [String]) async throws {
    guard arguments.count == 4, let deltas = Int(arguments[1]), let size = Int(arguments[2]),
      let budget = Double(arguments[3]), deltas > 0, size > 0
    else { throw BenchmarkError("streaming-row text|structured DELTAS BYTES BUDGET") }
    let row = Row(structured: arguments[0] == "structured", deltas: deltas, deltaBytes: size)
    let text = row.structured ? jsonDocument(bytes: row.totalBytes) : prose(bytes: row.totalBytes)
    let model = PulledModel(text: text, deltas: deltas)
    let session = GenerativeModelSession(model: model, logHandler: .silent)
    let startRSS = memoryKiB("VmRSS")
    let start = ContinuousClock.now
    let deadline = start + .seconds(budget)
    var received = 0
    if row.structured {
      for try await snapshot in session.streamResponse(to: "bench", generating: Document.self) {
        received = snapshot.jsonText.utf8.count
        if ContinuousClock.now > deadline { break }
      }
    } else {
      for try await snapshot in session.streamResponse(to: "bench") {
        received = snapshot.content.utf8.count
        if ContinuousClock.now > deadline { break }
      }
    }
    let seconds = (ContinuousClock.now - start) / .seconds(1)
    let finished = received == row.totalBytes
    // µs per delta over the first tenth, and over the last tenth reached
    // (the last ten hundredths before the end or the budget; none when that
    // would overlap the first).
    let marks = model.marks
    let hundredth = Double(deltas / 100)
    func perDelta(from: Int, to: Int) -> String {
      guard deltas >= 100, to > from, to < marks.count else { return "-" }
      return "\((marks[to] - marks[from]) / .microseconds(1) / (hundredth * Double(to - from)))"
    }
    let reached = marks.count - 1
    print(
      "ROW \(model.pulled) \(seconds) \(perDelta(from: 0, to: min(10, reached))) "
        + "\(reached >= 20 ? perDelta(from: reached - 10, to: reached) : "-") "
        + "\(memoryKiB("VmHWM")) \(startRSS) \(finished)")
  }

  static func parse(_ line: Substring) -> Figures? {
    let fields = line.split(separator: " ").dropFirst().map(String.init)
    guard fields.count == 7, let done = Int(fields[0]), let seconds = Double(fields[1]),
      let peak = Int(fields[4]), let start = Int(fields[5])
    else { return nil }
    return Figures(
      deltasDone: done, seconds: seconds, firstTenthMicroseconds: Double(fields[2]),
      lastTenthMicroseconds: Double(fields[3]), peakRSSKiB: peak, startRSSKiB: start, finished: fields[6] == "true")
  }

  static func markdown(_ results: [(Row, Figures)], budget: Double, repeats: Int) -> String {
    var lines = [
      "## Streaming cost per delta (issue 20, point 3: time and RSS linear in the answer)",
      "",
      "- CPU: \(SSEThroughput.cpuModel()) (lscpu \"Model name\"), "
        + "\(ProcessInfo.processInfo.activeProcessorCount) CPUs",
      "- Date: \(ISO8601DateFormatter().string(from: Date())), commit \(commit()), "
        + "`cloud-benchmark streaming \(Int(budget))` (release build)",
      "- A scripted in-process model makes each delta when the session asks for it; the consumer "
        + "iterates `streamResponse` (text) or `streamResponse(to:generating:)` (structured: "
        + "`{\"items\": [String]}`) and reads each snapshot's size. One process per row; peak RSS "
        + "is its VmHWM, growth is that minus its RSS before the stream. Medians of \(repeats) runs (one for "
        + "a row over 5 s); budget \(Int(budget)) s per run.",
      "",
      "| stream | time | µs / delta, first tenth | µs / delta, last tenth reached | last / first | peak RSS | RSS growth |",
      "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for (row, figures) in results {
      let ratio: String
      if let first = figures.firstTenthMicroseconds, let last = figures.lastTenthMicroseconds, first > 0 {
        ratio = format(last / first)
      } else {
        ratio = "–"
      }
      let time =
        figures.finished
        ? "\(format(figures.seconds * 1000)) ms"
        : "stopped at \(Int(budget)) s, \(grouped(figures.deltasDone)) of \(grouped(row.deltas)) deltas"
      lines.append(
        "| \(row.label) | \(time) | \(figures.firstTenthMicroseconds.map(format) ?? "–") | "
          + "\(figures.lastTenthMicroseconds.map(format) ?? "–") | \(ratio) | "
          + "\(format(Double(figures.peakRSSKiB) / 1024)) MiB | "
          + "\(format(Double(figures.peakRSSKiB - figures.startRSSKiB) / 1024)) MiB |")
    }
    return lines.joined(separator: "\n")
  }

  /// The checkout's short commit, or "unknown".
  static func commit() -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["git", "-C", LoopbackServer.repositoryRoot.path, "rev-parse", "--short", "HEAD"]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return "unknown" }
    let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
    return process.terminationStatus == 0 && !trimmed.isEmpty ? trimmed : "unknown"
  }

  /// ASCII prose of exactly `bytes` bytes.
  static func prose(bytes: Int) -> String {
    let sentence = "The sky is blue because air scatters short wavelengths of sunlight more than long ones. "
    var text = String(repeating: sentence, count: bytes / sentence.utf8.count + 1)
    text.removeLast(text.utf8.count - bytes)
    return text
  }

  /// A JSON document `{"items":["…","…"]}` of exactly `bytes` bytes (at least 16).
  static func jsonDocument(bytes: Int) -> String {
    let item = "\"" + String(repeating: "word ", count: 12) + "\""
    var text = #"{"items":["#
    while text.utf8.count + item.utf8.count + 1 + 2 + 4 <= bytes {
      text += item + ","
    }
    let padding = bytes - text.utf8.count - 2 - 2
    text += "\"" + String(repeating: "x", count: max(0, padding)) + "\"]}"
    return text
  }

  /// The process's `VmRSS` or `VmHWM` from /proc/self/status, in KiB.
  static func memoryKiB(_ field: String) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") }
    return line.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
  }

  static func format(_ value: Double) -> String { String(format: value < 10 ? "%.3f" : "%.1f", value) }

  static func grouped(_ value: Int) -> String {
    let digits = String(value)
    var out = ""
    for (index, digit) in digits.enumerated() {
      if index > 0, (digits.count - index) % 3 == 0 { out += "," }
      out.append(digit)
    }
    return out
  }

  static func bytes(_ value: Int) -> String {
    value >= 1 << 20 ? "\(format(Double(value) / Double(1 << 20))) MiB" : "\(grouped(value)) B"
  }
}

/// The structured rows' answer type.
struct Document: Generable {
  var items: [String]
}

/// Streams `text` in `deltas` equal pieces, each made when the session asks
/// for it, then a finish delta; records when each hundredth of the pieces
/// was asked for.
final class PulledModel: LanguageModel {
  let modelVersion = "scripted"
  let placement = ModelPlacement.cloud
  let availability = Availability.available
  /// The answer's bytes, made before the stream starts (so that they are in
  /// the RSS the row starts from, not in its growth).
  private let utf8: [UInt8]
  private let deltas: Int
  private let state = Mutex(State())

  private struct State {
    var pulled = 0
    var marks: [ContinuousClock.Instant] = []
  }

  init(text: String, deltas: Int) {
    self.utf8 = Array(text.utf8)
    self.deltas = deltas
  }

  /// How many pieces the session asked for.
  var pulled: Int { state.withLock { $0.pulled } }
  /// When the first piece, and then each further hundredth, was asked for
  /// (the last mark is the finish delta's).
  var marks: [ContinuousClock.Instant] { state.withLock { $0.marks } }

  func streamResponse(to request: ModelRequest) -> ResponseDeltaStream {
    let size = utf8.count / deltas
    let hundredth = max(1, deltas / 100)
    return ResponseDeltaStream(
      AsyncThrowingStream(unfolding: { [self] in
        let index = state.withLock { state -> Int in
          let index = state.pulled
          if index <= deltas, index % hundredth == 0 { state.marks.append(.now) }
          if index <= deltas { state.pulled += 1 }
          return index
        }
        if index < deltas {
          let piece = String(decoding: utf8[index * size..<(index + 1) * size], as: UTF8.self)
          return GenerateContentResponse(
            candidates: [Candidate(content: Content(role: "model", text: piece))], modelVersion: modelVersion)
        }
        guard index == deltas else { return nil }
        return GenerateContentResponse(
          candidates: [Candidate(finishReason: .stop)],
          usageMetadata: UsageMetadata(promptTokenCount: 1, candidatesTokenCount: deltas, totalTokenCount: deltas + 1),
          modelVersion: modelVersion)
      }))
  }
}
