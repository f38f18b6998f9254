import Foundation
import OpenAIServers

/// llama.cpp's own split of a model's output (Tests/ChatParse/chat_parse_reference.cpp,
/// built by scripts/build-chat-parse-reference.sh beside llama-server): the
/// template's chat parameters and `common_chat_parse`'s reasoning, content and
/// tool calls for one output after one user turn.
struct ChatParseReference {
  /// What the reference prints for one (template, output).
  struct Split: Decodable, Equatable {
    var format: String?
    var generationPrompt: String?
    var supportsThinking: Bool?
    var thinkingStartTag: String?
    var thinkingEndTags: [String]?
    var reasoningContent: String?
    var content: String?
    var toolCalls: [ToolCall]?
    /// Why the template or the output did not parse.
    var error: String?
    /// One split per output, when several were asked for at once.
    var splits: [Split]?

    struct ToolCall: Decodable, Equatable {
      var name: String
      var arguments: String
    }

    enum CodingKeys: String, CodingKey {
      case format, content, error, splits
      case generationPrompt = "generation_prompt"
      case supportsThinking = "supports_thinking"
      case thinkingStartTag = "thinking_start_tag"
      case thinkingEndTags = "thinking_end_tags"
      case reasoningContent = "reasoning_content"
      case toolCalls = "tool_calls"
    }
  }

  struct Failure: Error, CustomStringConvertible {
    let description: String
  }

  let path: String

  /// `HYBRID_CHAT_PARSE_REFERENCE`, else `chat-parse-reference` beside the
  /// llama-server the tests use (the set-up builds both into one prefix);
  /// nil when that file is not an executable.
  static var binaryPath: String? {
    let path: String
    if let named = ProcessInfo.processInfo.environment["HYBRID_CHAT_PARSE_REFERENCE"], !named.isEmpty {
      path = named
    } else {
      guard let server = LlamaServerProcess.binaryPath else { return nil }
      path =
        URL(fileURLWithPath: server).deletingLastPathComponent()
        .appendingPathComponent("chat-parse-reference").path
    }
    return FileManager.default.isExecutableFile(atPath: path) ? path : nil
  }

  /// The template's chat parameters (format, generation prompt, thinking tags)
  /// after one user turn "Hi", with the split of each of `outputs` in
  /// `splits`, from one process.
  func splits(template: String, outputs: [String]) throws -> Split {
    try run(["template": template, "outputs": outputs])
  }

  /// As `splits(template:outputs:)`, with `tools` (OpenAI-style JSON objects)
  /// offered, several calls allowed, thinking off (the template's generation
  /// prompt then closes any block it would open) and no BOS or EOS text, as
  /// test-chat.cpp reads templates (llama.cpp's analyser takes an EOS the
  /// template prints after a call for part of the call's syntax).
  func splits(template: String, outputs: [String], tools: [[String: Any]]) throws -> Split {
    try run([
      "template": template, "outputs": outputs, "tools": tools, "enable_thinking": false, "bos_token": "",
      "eos_token": "",
    ])
  }

  /// Runs the reference on `request`, with thinking on unless it says
  /// otherwise and `<s>` / `</s>` as BOS and EOS.
  private func run(_ request: [String: Any]) throws -> Split {
    let request = request.merging(["enable_thinking": true, "bos_token": "<s>", "eos_token": "</s>"]) { own, _ in own }
    // Sorted keys: llama.cpp reads a tool's properties in the order the JSON gives them.
    let input = try JSONSerialization.data(withJSONObject: request, options: [.sortedKeys])
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    let stdin = Pipe()
    let stdout = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = FileHandle.nullDevice
    try process.run()
    // The reference reads all of its input before it writes, so writing first cannot block on a full stdout.
    try stdin.fileHandleForWriting.write(contentsOf: input)
    try stdin.fileHandleForWriting.close()
    let data = stdout.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationReason == .exit, process.terminationStatus == 0 else {
      throw Failure(description: "chat-parse-reference ended with status \(process.terminationStatus)")
    }
    return try JSONDecoder().decode(Split.self, from: data)
  }
}
