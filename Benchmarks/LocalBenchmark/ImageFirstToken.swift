import Foundation
import HybridInferenceCore
import HybridInferenceLlama

/// Time to first token of a prompt with one image: the library beside
/// llama.cpp's `llama-mtmd-cli` on the same model, projector and image, and
/// a session's second turn with the image's cells kept beside the same
/// conversation prefilled by a fresh request (which encodes it again).
///
/// `llama-mtmd-cli` prints no time to first token: its figure is read from
/// the time stamps of its own log (`cliFigures`), a one-token run's.
enum ImageFirstToken {
  struct Figures {
    var library: Double
    var cli: Double
    var cliEncode: Double
    var kept: Double
    var encodedAgain: Double
  }

  static let question = "What is in the picture?"
  static let options = HybridGenerationOptions.foundationModels(
    GenerationOptions(sampling: .greedy, maximumResponseTokens: 8))

  static func measure(
    model path: String, projector: String, cli executable: String, image: String, runs: Int, threads: Int
  ) async throws -> Figures {
    let png = try Data(contentsOf: URL(fileURLWithPath: image))
    let model = LocalSystemModel(modelPath: path, projectorPath: projector, contextSize: 512, threads: threads)
    try await model.prepare()
    let prompt = Prompt(question, attachments: [.image(png, mimeType: "image/png")])
    // One turn first, so that every timed one finds the context made.
    _ = try await GenerativeModelSession(model: model, logHandler: .silent).respond(to: prompt, options: options)
    var first: [Double] = []
    var kept: [Double] = []
    var again: [Double] = []
    for _ in 0..<runs {
      let session = GenerativeModelSession(model: model, logHandler: .silent)
      first.append(try await firstToken { session.streamResponse(to: prompt, options: options) })
      kept.append(try await firstToken { session.streamResponse(to: "And now?", options: options) })
      let asked = Transcript(entries: Array(session.transcript.entries.dropLast()))
      let request = ModelRequest(transcript: asked, options: options)
      again.append(try await firstToken { model.streamResponse(to: request) })
    }
    var cli: [Double] = []
    var encoded: [Double] = []
    let arguments = [
      "-m", path, "--mmproj", projector, "--temp", "0", "-t", "\(threads)", "-lv", "4", "--image", image, "-p",
      question, "-n", "1",
    ]
    // The pinned CLI now and then exits before its log is written out: such a run is tried again.
    var tries = 0
    while cli.count < runs, tries < runs * 4 {
      tries += 1
      let log = try output(of: executable, arguments)
      guard let figures = cliFigures(log) else { continue }
      cli.append(figures.firstToken)
      encoded.append(figures.encodeAndPrefill)
    }
    guard !cli.isEmpty else { throw BenchmarkError("llama-mtmd-cli never printed its timings") }
    return Figures(
      library: median(first), cli: median(cli), cliEncode: median(encoded), kept: median(kept),
      encodedAgain: median(again))
  }

  /// From the CLI's log (`-lv 4`, each line stamped with the time since its
  /// start): seconds from its last line before the prompt (`main: loading
  /// model`, printed once model and projector are loaded and warmed up) to
  /// its timings, printed after the one token; and its own encode time plus
  /// `prompt eval time`.
  static func cliFigures(_ log: String) -> (firstToken: Double, encodeAndPrefill: Double)? {
    func stamp(_ line: Substring) -> Double? {
      let fields = line.prefix { $0 != " " }.split(separator: ".").compactMap { Double($0) }
      guard fields.count == 4 else { return nil }
      return fields[0] * 60 + fields[1] + fields[2] / 1e3 + fields[3] / 1e6
    }
    let lines = log.split(separator: "\n")
    guard let ready = lines.last(where: { $0.contains("main: loading model:") }).flatMap(stamp),
      let done = lines.first(where: { $0.contains("llama_perf_context_print:") }).flatMap(stamp),
      let prefill = log.firstMatch(of: /prompt eval time =\s+([0-9.]+) ms/).flatMap({ Double($0.1) })
    else { return nil }
    let encode = log.matches(of: /mtmd batch encoding done in (\d+) ms/).compactMap { Double($0.1) }.reduce(0, +)
    return (done - ready, (encode + prefill) / 1000)
  }

  /// Seconds from the call to the stream's first delta.
  private static func firstToken<S: AsyncSequence>(_ stream: () -> S) async throws -> Double {
    let start = ContinuousClock.now
    var firstAt: ContinuousClock.Instant?
    for try await _ in stream() where firstAt == nil { firstAt = .now }
    return ((firstAt ?? .now) - start).seconds
  }

  /// The standard error of `executable` with `arguments`, standard input closed.
  private static func output(of executable: String, _ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    let errors = Pipe()
    process.standardError = errors
    try process.run()
    let log = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      throw BenchmarkError("\(executable) exited with status \(process.terminationStatus)")
    }
    return String(decoding: log, as: UTF8.self)
  }
}
