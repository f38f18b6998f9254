import Foundation
import HybridInferenceCore
import HybridInferenceLlama

/// "Restored conversation": time to first token of a restored ~1,100-token
/// conversation on device, with and without the prompt cache, beside the
/// same turn in a live session; and what a save costs per turn.
///
/// The conversation is built by hand (instructions and eight answered
/// turns, then a ninth question). "Restored" is a model value with a new
/// context, as another process would have: without the cache it prefills
/// everything; with it, the state of turn 8's prompt, saved by another
/// model value (another context), is loaded and only the rest is decoded.
/// "Live" is the same turn on a context whose sequence already holds the
/// conversation from the turn before.
enum PromptCacheBenchmark {
  static let options = HybridGenerationOptions.foundationModels(
    GenerationOptions(sampling: .greedy, maximumResponseTokens: 16))

  static let instructions =
    "You are a meticulous travel assistant. Answer in plain prose, cite distances in kilometres, "
    + "and keep every answer under a hundred words. Never invent opening hours; say when you do not know."

  static func history(turns: Int) -> Transcript {
    var transcript = Transcript(instructions: instructions)
    for turn in 0..<turns {
      transcript.entries.append(.prompt("Stop \(turn + 1) of my trip: what should I see in town number \(turn + 1)?"))
      let answer = (0..<5).map { sentence in
        "In town \(turn + 1), the \(["old bridge", "market hall", "river walk", "hill fort", "harbour"][sentence]) is worth "
          + "an hour, about \(sentence * 3 + turn + 2) kilometres from the station."
      }.joined(separator: " ")
      transcript.entries.append(.response(Content(text: answer), modelVersion: LocalSystemModel.modelVersion))
    }
    return transcript
  }

  struct Turn {
    var timeToFirstToken: Double
    var promptTokens: Int
    var cachedTokens: Int
    var saveLog: String?
    var loadLog: String?
  }

  /// One turn on `transcript`: time to the first text, and the usage.
  static func turn(_ transcript: Transcript, on model: LocalSystemModel, storage: SessionStorage = SessionStorage())
    async throws -> Turn
  {
    let saves = LockedBox<String?>(nil)
    let loads = LockedBox<String?>(nil)
    let request = ModelRequest(
      transcript: transcript, options: options, sessionStorage: storage,
      logHandler: LogHandler { record in
        if record.message.hasPrefix("prompt cache: saved") { saves.set(record.message) }
        if record.message.hasPrefix("prompt cache: loaded") { loads.set(record.message) }
      })
    let start = ContinuousClock.now
    var first: ContinuousClock.Instant?
    var usage: (Int, Int) = (0, 0)
    for try await delta in model.streamResponse(to: request) {
      if first == nil, !delta.text.isEmpty { first = .now }
      if let metadata = delta.usageMetadata {
        usage = (metadata.promptTokenCount ?? 0, metadata.cachedContentTokenCount ?? 0)
      }
    }
    return Turn(
      timeToFirstToken: ((first ?? .now) - start).seconds, promptTokens: usage.0, cachedTokens: usage.1,
      saveLog: saves.value, loadLog: loads.value)
  }

  static func run(modelPath: String, runs: Int) async throws {
    let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
      "hi-prompt-cache-bench-\(getpid())")
    let cache = PromptCache.directory(directory)
    defer { try? FileManager.default.removeItem(at: directory) }
    var eighth = history(turns: 7)
    eighth.entries.append(.prompt("Stop 8 of my trip: what should I see in town number 8?"))
    var ninth = history(turns: 8)
    ninth.entries.append(.prompt("Which of these eight towns would you pick for a rainy day, and why?"))
    var (live, cold, restored) = ([Turn](), [Turn](), [Turn]())
    var writes: [String] = []
    for _ in 0..<runs {
      // Live: one context, the turn before then this one, on the same sequence.
      let liveModel = LocalSystemModel(modelPath: modelPath, contextSize: 2048)
      try await liveModel.prepare()
      let storage = SessionStorage()
      _ = try await turn(eighth, on: liveModel, storage: storage)
      live.append(try await turn(ninth, on: liveModel, storage: storage))
      // Restored without the cache: a new context prefills it all.
      let coldModel = LocalSystemModel(modelPath: modelPath, contextSize: 2048)
      try await coldModel.prepare()
      cold.append(try await turn(ninth, on: coldModel))
      // Restored with the cache: another context saved turn 8; a new one answers turn 9.
      try cache.removeAll()
      let saver = LocalSystemModel(modelPath: modelPath, contextSize: 2048, promptCache: cache)
      try await saver.prepare()
      let saved = try await turn(eighth, on: saver)
      if let log = saved.saveLog { writes.append("\(saved.promptTokens) tokens: \(log)") }
      let cachedModel = LocalSystemModel(modelPath: modelPath, contextSize: 2048, promptCache: cache)
      try await cachedModel.prepare()
      let answer = try await turn(ninth, on: cachedModel)
      restored.append(answer)
      if let log = answer.saveLog { writes.append("\(answer.promptTokens) tokens: \(log)") }
      if let log = answer.loadLog { writes.append(log) }
    }
    func line(_ label: String, _ turns: [Turn]) -> String {
      "\(label): ttft \(format(median(turns.map(\.timeToFirstToken)) * 1000)) ms (runs \(turns.map { format($0.timeToFirstToken * 1000) })), prompt \(turns.first?.promptTokens ?? 0) tokens, \(turns.first?.cachedTokens ?? 0) not decoded"
    }
    print("restored conversation, turn 9, on \(StreamedDecode.cpuModel):")
    print(line("  live session (KV in memory)   ", live))
    print(line("  new context, no prompt cache  ", cold))
    print(line("  new context, prompt cache     ", restored))
    print("  disk usage after the last run: \(cache.currentDiskUsage) bytes")
    print("saves (copy on the llama thread, checksum + write on the write queue) and loads (read, check, set):")
    for write in writes { print("  \(write)") }
  }
}

/// A value set from a log handler and read after the stream.
final class LockedBox<Value: Sendable>: @unchecked Sendable {
  // @unchecked: every access holds `lock`.
  private let lock = NSLock()
  private var stored: Value
  init(_ value: Value) { stored = value }
  func set(_ value: Value) { lock.withLock { stored = value } }
  var value: Value { lock.withLock { stored } }
}
