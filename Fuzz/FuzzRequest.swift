import Foundation

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// libFuzzer target: a transcript the app builds by hand, through every
/// request encoder.
///
/// The input is read as a program that builds a `JSONValue` (open an array
/// or an object, close, add a scalar), nested up to twice
/// `JSONValue.maximumDepth` so that both sides of the bound are reached (a
/// deeper value would crash the harness itself: releasing it recurses in
/// Swift's runtime). It becomes a call's arguments and its output in a
/// transcript, which goes through the session's check, Gemini's request
/// body, the OpenAI messages and body, the chat-template messages, the
/// transcript's `Codable` round trip, and `==` and hashing. Any trap is a
/// finding; typed errors are the expected outcome.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequest(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
  let value = buildValue(UnsafeBufferPointer(start: start, count: count))
  let call = Part(functionCall: Part.FunctionCall(id: "c1", name: "f", args: value))
  var transcript = Transcript(entries: [
    .prompt("p"), .response(Content(role: "model", parts: [call]), modelVersion: "m"),
    .toolOutputs([Part.FunctionResponse(id: "c1", name: "f", response: value)]), .prompt("q"),
  ])
  let checked = (try? transcript.validate()) != nil
  let request = ModelRequest(transcript: transcript)
  if let body = try? GenerateContentRequest(request, safetySettings: nil) {
    precondition(checked, "a transcript past the bound reached Gemini's body")
    _ = try? RequestBodyEncoder.encode(body)
  }
  if let messages = try? ChatMessage.messages(of: transcript) {
    precondition(checked, "a transcript past the bound reached the OpenAI messages")
    _ = try? RequestBodyEncoder.encode(messages)
  }
  let templated = ToolCallSyntax(
    pattern: ToolCallPattern(
      sectionOpen: "", call: [.text("<tool_call>"), .name, .arguments(.json)], separator: "", sectionClose: "",
      allowsSeveral: false))
  if let messages = try? ChatTemplate.messages(of: transcript, syntax: templated) {
    _ = messages.map { $0.jinjaValue { $0 } }
  }
  if let saved = try? JSONEncoder().encode(transcript) {
    _ = try? JSONDecoder().decode(Transcript.self, from: saved)
  }
  _ = value == value
  _ = value.hashValue
  transcript.entries.removeAll()
  return 0
}

/// Each byte an instruction: open an array or an object, close the
/// innermost container, or add a scalar; containers left open are closed.
private func buildValue(_ bytes: UnsafeBufferPointer<UInt8>) -> JSONValue {
  let deepest = 2 * JSONValue.maximumDepth
  var open: [(items: [JSONValue], members: [String: JSONValue]?)] = [([], [:])]
  func add(_ value: JSONValue, _ byte: UInt8) {
    let last = open.count - 1
    if open[last].members != nil {
      open[last].members?["k\(byte % 4)"] = value
    } else {
      open[last].items.append(value)
    }
  }
  func close(_ byte: UInt8) {
    guard open.count > 1, let top = open.popLast() else { return }
    add(top.members.map(JSONValue.object) ?? .array(top.items), byte)
  }
  for byte in bytes {
    switch byte % 8 {
    case 0 where open.count < deepest: open.append(([], nil))
    case 1 where open.count < deepest: open.append(([], [:]))
    case 2: close(byte)
    case 3: add(.number(Double(byte) / 3), byte)
    case 4: add(.string(String(repeating: "\u{E000}\"", count: Int(byte % 3))), byte)
    case 5: add(.null, byte)
    case 6: add(.exactInteger(JSONValue.ExactInteger("123456789012345678901234567890") ?? .init(0)), byte)
    default: add(.bool(byte > 128), byte)
    }
  }
  while open.count > 1 { close(0) }
  return .object(open[0].members ?? [:])
}
