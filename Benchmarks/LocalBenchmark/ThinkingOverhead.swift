import Foundation
import HybridInferenceCore
import HybridInferenceLlama

/// Streamed decode of a thinking model through the thought splitter, beside
/// the same weights without it: two copies of one GGUF file whose chat
/// templates differ only in `<think>\n` at the end of the generation prompt
/// (written with gguf's `gguf_new_metadata`, from the set-up's venv). Every
/// token the thinking copy writes goes through the splitter and arrives as
/// a thought part (random or small models rarely close the block), the
/// splitter's worst case. Greedy, rounds alternated, medians.
enum ThinkingOverhead {
  static let tokens = 128
  static let prompt = "Write a long essay about the history of the Roman Empire."
  /// ChatML as SmolLM2 writes it; the thinking copy's names `</think>` (an
  /// earlier answer keeps only what follows it), as thinking templates do,
  /// which is how the device knows the template thinks.
  static let chatML =
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{% set content = message['content'] %}"
    + "{% if '</think>' in content %}{% set content = content.split('</think>')[-1] %}{% endif %}"
    + "{{ content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n"

  static func run(modelPath: String, rounds: Int) async throws {
    let work = FileManager.default.temporaryDirectory.appendingPathComponent("thinking-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: work) }
    let plainPath = work.appendingPathComponent("plain.gguf").path
    let thinkingPath = work.appendingPathComponent("thinking.gguf").path
    try copy(modelPath, to: plainPath, template: chatML + "{% endif %}")
    try copy(modelPath, to: thinkingPath, template: chatML + "<think>\n{% endif %}")
    let plain = LocalSystemModel(modelPath: plainPath, threads: 2)
    let thinking = LocalSystemModel(modelPath: thinkingPath, threads: 2)
    try await plain.prepare()
    try await thinking.prepare()
    _ = try await streamed(plain)
    _ = try await streamed(thinking)
    var without: [Double] = []
    var with: [Double] = []
    var thoughts = 0
    for _ in 0..<rounds {
      without.append(try await streamed(plain).rate)
      let sample = try await streamed(thinking)
      with.append(sample.rate)
      thoughts = sample.thoughts
    }
    let ratio = median(with) / median(without)
    print(
      "thinking split, streamed decode of \(tokens) tokens on \(URL(fileURLWithPath: modelPath).lastPathComponent), "
        + "median of \(rounds): with the splitter \(format(median(with))) t/s (\(thoughts) of \(tokens) tokens "
        + "thought), without \(format(median(without))) t/s; ratio \(format(ratio, 3)) (goal >= 0.97)")
    print("runs (t/s): with \(with.map { format($0) }), without \(without.map { format($0) })")
    guard thoughts > 0 else { throw BenchmarkError("the thinking copy wrote no thought: the splitter did not run") }
  }

  /// Tokens per second from the first snapshot to the last, thoughts
  /// included, and how many tokens were thought.
  static func streamed(_ model: LocalSystemModel) async throws -> (rate: Double, thoughts: Int) {
    let session = GenerativeModelSession(model: model, logHandler: .silent)
    let options = HybridGenerationOptions.foundationModels(
      GenerationOptions(sampling: .greedy, maximumResponseTokens: tokens))
    var first: ContinuousClock.Instant?
    var usage: UsageMetadata?
    for try await snapshot in session.streamResponse(to: prompt, options: options) {
      if first == nil { first = .now }
      usage = snapshot.rawResponse.usageMetadata ?? usage
    }
    let thoughts = usage?.thoughtsTokenCount ?? 0
    let generated = (usage?.candidatesTokenCount ?? 0) + thoughts
    guard let first, generated > 1 else { throw BenchmarkError("no tokens streamed") }
    return (Double(generated - 1) / (ContinuousClock.now - first).seconds, thoughts)
  }

  /// Writes `source` with `template` as its chat template.
  static func copy(_ source: String, to destination: String, template: String) throws {
    let cache =
      ProcessInfo.processInfo.environment["HYBRID_INFERENCE_CACHE"]
      ?? (ProcessInfo.processInfo.environment["XDG_CACHE_HOME"] ?? NSHomeDirectory() + "/.cache") + "/hybrid-inference"
    let process = Process()
    process.executableURL = URL(fileURLWithPath: cache + "/venv/bin/python")
    process.arguments = [
      "-m", "gguf.scripts.gguf_new_metadata", "--chat-template", template, "--force", source, destination,
    ]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      throw BenchmarkError("gguf_new_metadata could not copy \(source) (the set-up's venv has gguf)")
    }
  }
}
