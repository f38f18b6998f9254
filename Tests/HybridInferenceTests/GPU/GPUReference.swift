import Foundation
import OpenAIServers
import TestPrerequisites
import XCTest

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// llama.cpp's own answers, from its server built with the same backends
/// (the llama-server of the prefix the package is built against).
enum GPUReference {
  /// llama-server with `model`, its chat template, one slot of 512 cells and
  /// `layers` layers on the GPU (`-ngl`); with none, no device at all
  /// (`--device none`), as `GPUOffload.none` gives llama.cpp none: otherwise
  /// llama.cpp still takes a prompt's large batches to the GPU, weights and
  /// all. A missing binary is a missing prerequisite.
  static func start(model: String, layers: Int) async throws -> LlamaServerProcess {
    let placement = layers > 0 ? ["-ngl", "\(layers)"] : ["-ngl", "0", "--device", "none"]
    do {
      return try await LlamaServerProcess(
        model: model, contextSize: 512, threads: 2, extraArguments: ["--jinja"] + placement,
        startTimeout: .seconds(60))
    } catch let error as LlamaServerProcess.StartError where error.isMissingBinary {
      throw Prerequisite.missing(error.description)
    }
  }

  /// The greedy answer (temperature 0) of at most `tokens` tokens to one user message.
  static func greedy(_ prompt: String, tokens: Int, server: LlamaServerProcess) async throws -> String {
    let url = try XCTUnwrap(URL(string: "http://127.0.0.1:\(server.port)/v1/chat/completions"))
    // lavapipe compiles each shader on first use: the first answer takes minutes.
    var request = URLRequest(url: url, timeoutInterval: 600)
    request.httpMethod = "POST"
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.httpBody = try JSONSerialization.data(withJSONObject: [
      "messages": [["role": "user", "content": prompt]], "max_tokens": tokens, "temperature": 0,
    ])
    let (data, response) = try await URLSession.shared.data(for: request)
    XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 200, String(decoding: data, as: UTF8.self))
    let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
    let choice = (object?["choices"] as? [[String: Any]])?.first
    return try XCTUnwrap((choice?["message"] as? [String: Any])?["content"] as? String, "\(object ?? [:])")
  }
}
