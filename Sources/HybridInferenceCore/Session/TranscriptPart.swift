/// One `Part` in the transcript's JSON format (see `Transcript`'s `Codable`
/// conformance): Gemini's field names, with tool arguments and outputs as
/// JSON text so that every number survives.
struct TranscriptPart: Codable {
  let part: Part

  init(_ part: Part) { self.part = part }

  private enum CodingKeys: String, CodingKey, CaseIterable {
    case text, thought, thoughtSignature, inlineData, fileData, functionCall, functionResponse
    case executableCode, codeExecutionResult
  }

  private enum CallKeys: String, CodingKey { case id, name, argsJSON, responseJSON }

  /// Any key, to find the ones this version does not know.
  private struct AnyKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
  }

  init(from decoder: any Decoder) throws {
    let unknown = try decoder.container(keyedBy: AnyKey.self).allKeys.first {
      CodingKeys(rawValue: $0.stringValue) == nil
    }
    if let unknown {
      throw DecodingError.dataCorrupted(
        .init(
          codingPath: decoder.codingPath + [unknown],
          debugDescription:
            "unknown part field \(OrderedJSON.quote(unknown.stringValue)); this version reads "
            + CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")))
    }
    let container = try decoder.container(keyedBy: CodingKeys.self)
    var part = Part()
    part.text = try container.decodeIfPresent(String.self, forKey: .text)
    part.thought = try container.decodeIfPresent(Bool.self, forKey: .thought)
    part.thoughtSignature = try container.decodeIfPresent(String.self, forKey: .thoughtSignature)
    part.inlineData = try container.decodeIfPresent(Part.Blob.self, forKey: .inlineData)
    part.fileData = try container.decodeIfPresent(Part.FileData.self, forKey: .fileData)
    part.executableCode = try container.decodeIfPresent(Part.ExecutableCode.self, forKey: .executableCode)
    part.codeExecutionResult = try container.decodeIfPresent(
      Part.CodeExecutionResult.self, forKey: .codeExecutionResult)
    if container.contains(.functionCall) {
      let call = try container.nestedContainer(keyedBy: CallKeys.self, forKey: .functionCall)
      part.functionCall = Part.FunctionCall(
        id: try call.decodeIfPresent(String.self, forKey: .id), name: try call.decode(String.self, forKey: .name),
        args: try call.decodeIfPresent(String.self, forKey: .argsJSON).map { try Self.value($0, .argsJSON, call) })
    }
    if container.contains(.functionResponse) {
      let response = try container.nestedContainer(keyedBy: CallKeys.self, forKey: .functionResponse)
      part.functionResponse = Part.FunctionResponse(
        id: try response.decodeIfPresent(String.self, forKey: .id),
        name: try response.decode(String.self, forKey: .name),
        response: try Self.value(
          try response.decode(String.self, forKey: .responseJSON), .responseJSON, response))
    }
    self.part = part
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encodeIfPresent(part.text, forKey: .text)
    try container.encodeIfPresent(part.thought, forKey: .thought)
    try container.encodeIfPresent(part.thoughtSignature, forKey: .thoughtSignature)
    try container.encodeIfPresent(part.inlineData, forKey: .inlineData)
    try container.encodeIfPresent(part.fileData, forKey: .fileData)
    try container.encodeIfPresent(part.executableCode, forKey: .executableCode)
    try container.encodeIfPresent(part.codeExecutionResult, forKey: .codeExecutionResult)
    if let call = part.functionCall {
      var nested = container.nestedContainer(keyedBy: CallKeys.self, forKey: .functionCall)
      try nested.encodeIfPresent(call.id, forKey: .id)
      try nested.encode(call.name, forKey: .name)
      try nested.encodeIfPresent(try call.args.map { try Self.text($0, encoder) }, forKey: .argsJSON)
    }
    if let response = part.functionResponse {
      var nested = container.nestedContainer(keyedBy: CallKeys.self, forKey: .functionResponse)
      try nested.encodeIfPresent(response.id, forKey: .id)
      try nested.encode(response.name, forKey: .name)
      try nested.encode(try Self.text(response.response, encoder), forKey: .responseJSON)
    }
  }

  /// The JSON text of `value`, every number exact; `EncodingError` for what
  /// JSON cannot hold (a number that is not finite) or the reader would
  /// refuse (nesting beyond `JSONValue.maximumDepth`). The error names the
  /// value in words, not the value itself: describing a deep value recurses.
  private static func text(_ value: JSONValue, _ encoder: any Encoder) throws -> String {
    switch value.jsonTextProblem {
    case .tooDeep:
      throw EncodingError.invalidValue(
        "a JSONValue nested deeper than \(JSONValue.maximumDepth) levels",
        .init(
          codingPath: encoder.codingPath,
          debugDescription: "a tool value nests deeper than \(JSONValue.maximumDepth) levels"))
    case .notFinite:
      throw EncodingError.invalidValue(
        value, .init(codingPath: encoder.codingPath, debugDescription: "a tool value holds a number that is not finite")
      )
    case nil: return value.jsonText
    }
  }

  /// The value of JSON text read from `key`; `DecodingError` when it is not JSON.
  private static func value(
    _ text: String, _ key: CallKeys, _ container: KeyedDecodingContainer<CallKeys>
  ) throws -> JSONValue {
    do {
      return try JSONPrefixParser.parse(text).jsonValue
    } catch {
      throw DecodingError.dataCorruptedError(
        forKey: key, in: container, debugDescription: "\(key.rawValue) is not JSON: \(error)")
    }
  }
}
