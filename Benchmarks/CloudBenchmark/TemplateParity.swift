import Foundation
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote
import OpenAIServers

/// `cloud-benchmark template-parity --local-model GGUF`: greedy answers of
/// the in-process model (prompt rendered by our Jinja engine) beside
/// `llama-server --jinja` (prompt rendered by llama.cpp's minja) on the same
/// GGUF, turn by turn.
///
/// Both sides get the same history at every turn (the device's earlier
/// answers), so a difference is the prompt or the arithmetic of that turn,
/// never an earlier divergence carried forward. Same file, same threads,
/// temperature 0 / greedy, one slot on the server.
enum TemplateParity {
  /// Conversations with and without instructions, several turns each.
  static let conversations: [(instructions: String?, turns: [String])] = [
    (nil, ["What is the capital of France?", "And of Italy?", "Which of the two is larger?"]),
    ("You are a helpful assistant.", ["What is 2+2?", "Multiply that by ten.", "Now subtract five."]),
    (nil, ["Write a haiku about the sea.", "Now one about mountains."]),
    ("Answer in one short sentence.", ["Why is the sky blue?", "Why are sunsets red?", "What about clouds?"]),
    (nil, ["Name three fruits.", "Which one has the most vitamin C?"]),
    ("You are a pirate.", ["Hello! Who are you?", "Where is your ship?"]),
  ]

  static func run(modelPath: String, maxTokens: Int = 48) async throws {
    let threads = max(1, ProcessInfo.processInfo.activeProcessorCount)
    let server = try await LlamaServerProcess(
      model: modelPath, parallel: 1, contextSize: 4096, threads: threads, extraArguments: ["--jinja"])
    defer { server.stop() }
    let fleet = OpenAICompatibleModel(
      name: "parity", baseURL: server.baseURL, apiKey: nil,
      requestOptions: RequestOptions(timeout: .seconds(120), retryPolicy: .none), logHandler: .silent)
    let device = LocalSystemModel(modelPath: modelPath, contextSize: 4096, threads: threads)
    let options = HybridGenerationOptions(
      gemini: GenerationConfig(temperature: 0, maxOutputTokens: maxTokens),
      foundationModels: GenerationOptions(sampling: .greedy, maximumResponseTokens: maxTokens))

    var identical = 0
    var total = 0
    var differences: [String] = []
    for (index, conversation) in conversations.enumerated() {
      var transcript = Transcript(instructions: conversation.instructions)
      for (turn, prompt) in conversation.turns.enumerated() {
        transcript.entries.append(.prompt(prompt))
        let request = ModelRequest(transcript: transcript, options: options)
        let ours = try await device.respond(to: request).text
        let theirs = try await fleet.respond(to: request).text
        total += 1
        if ours == theirs {
          identical += 1
        } else {
          differences.append(
            "| \(index + 1).\(turn + 1) | \(cell(ours)) | \(cell(theirs)) |")
        }
        transcript.entries.append(
          .response(Content(role: "model", text: ours), modelVersion: device.modelVersion))
      }
    }

    print("## Chat template parity: in-process (our Jinja) beside llama-server --jinja")
    print()
    print(
      "Greedy, \(maxTokens) tokens a turn, \(conversations.count) conversations "
        + "(\(conversations.filter { $0.instructions != nil }.count) with instructions), same GGUF, "
        + "\(threads) threads; every turn gets the same history on both sides.")
    print()
    print("**Identical turns: \(identical) / \(total)**")
    if !differences.isEmpty {
      print()
      print("| turn | in-process | llama-server |")
      print("| --- | --- | --- |")
      differences.forEach { print($0) }
    }
    print()
  }

  private static func cell(_ text: String) -> String {
    text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: "⏎")
  }
}
