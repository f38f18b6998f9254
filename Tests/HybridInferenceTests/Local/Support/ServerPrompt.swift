import Foundation
import OpenAIServers
import TestPrerequisites
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceLlama

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A conversation sent both ways: to the library as a `ModelRequest`, to
/// llama-server as OpenAI messages.
struct ParityConversation {
  var name: String
  var instructions: String?
  /// Alternating turns, the user's first and last.
  var turns: [String]

  static let systemAndUser = ParityConversation(
    name: "system + user", instructions: "Be brief.", turns: ["Why is the sky blue?"])
  static let userAssistantUser = ParityConversation(
    name: "user/assistant/user", instructions: nil, turns: ["Hi", "Hello! How can I help?", "Tell me a joke."])
  static let all = [systemAndUser, userAssistantUser]

  var request: ModelRequest {
    let entries = turns.enumerated().map { index, text in
      index.isMultiple(of: 2)
        ? Transcript.Entry.prompt(text) : .response(Content(text: text), modelVersion: "parity")
    }
    return ModelRequest(transcript: Transcript(instructions: instructions, entries: entries))
  }

  var messages: [[String: String]] {
    let system = instructions.map { [["role": "system", "content": $0]] } ?? []
    return system
      + turns.enumerated().map { index, text in
        ["role": index.isMultiple(of: 2) ? "user" : "assistant", "content": text]
      }
  }
}

/// The tokens llama-server prefills for a chat completion: the template's
/// prompt (`POST /apply-template`, the render a completion makes) tokenized as
/// a completion tokenizes it (`POST /tokenize`, special tokens added and parsed).
enum ServerPrompt {
  /// llama-server with `model` and its chat template (`--jinja`); a missing
  /// binary is a missing prerequisite.
  static func start(model: String) async throws -> LlamaServerProcess {
    do {
      return try await LlamaServerProcess(
        model: model, contextSize: 512, threads: 1, extraArguments: ["--jinja"], startTimeout: .seconds(30))
    } catch let error as LlamaServerProcess.StartError where error.isMissingBinary {
      throw Prerequisite.missing(error.description)
    }
  }

  /// The prompt's tokens; `variables` go to the template (`chat_template_kwargs`).
  static func tokens(
    of conversation: ParityConversation, variables: [String: Any] = [:], server: LlamaServerProcess
  ) async throws -> [Int32] {
    var body: [String: Any] = ["messages": conversation.messages]
    if !variables.isEmpty { body["chat_template_kwargs"] = variables }
    let applied = try await post("apply-template", body, server: server)
    let prompt = try XCTUnwrap(applied["prompt"] as? String, "no prompt in \(applied)")
    let tokenized = try await post(
      "tokenize", ["content": prompt, "add_special": true, "parse_special": true], server: server)
    let tokens = try XCTUnwrap(tokenized["tokens"] as? [Int], "no tokens in \(tokenized)")
    return tokens.map { Int32(truncatingIfNeeded: $0) }
  }

  private static func post(_ path: String, _ body: [String: Any], server: LlamaServerProcess) async throws
    -> [String: Any]
  {
    let url = try XCTUnwrap(URL(string: "http://127.0.0.1:\(server.port)/\(path)"))
    var request = URLRequest(url: url)
    request.httpMethod = "POST"
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.httpBody = try JSONSerialization.data(withJSONObject: body)
    let (data, response) = try await URLSession.shared.data(for: request)
    let status = (response as? HTTPURLResponse)?.statusCode ?? 0
    let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
    guard status == 200, let object else {
      throw ServerPromptError(description: "/\(path) answered \(status): \(String(decoding: data, as: UTF8.self))")
    }
    return object
  }
}

struct ServerPromptError: Error, CustomStringConvertible {
  var description: String
}
