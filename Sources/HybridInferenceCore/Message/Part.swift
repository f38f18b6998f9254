import Foundation

/// One piece of a turn: text, inline data, a function call or its result, code.
///
/// Follows the REST `Part` union field for field. Exactly one payload field is
/// normally set; `thought` and `thoughtSignature` qualify it.
public struct Part: Sendable, Hashable, Codable {
  /// Text: answer text, or a thought summary when `thought` is true.
  public var text: String?
  /// Bytes sent inline (an image, audio).
  public var inlineData: Blob?
  /// A reference to an uploaded file.
  public var fileData: FileData?
  /// A call the model asks the app to make.
  public var functionCall: FunctionCall?
  /// The app's answer to a function call.
  public var functionResponse: FunctionResponse?
  /// Code the model wrote for the code-execution tool.
  public var executableCode: ExecutableCode?
  /// The result of running that code.
  public var codeExecutionResult: CodeExecutionResult?
  /// True when the part is a thought summary rather than answer text.
  public var thought: Bool?
  /// An opaque signature that must be sent back with the part in later turns.
  public var thoughtSignature: String?

  /// A part; set one payload field.
  public init(
    text: String? = nil, inlineData: Blob? = nil, fileData: FileData? = nil,
    functionCall: FunctionCall? = nil, functionResponse: FunctionResponse? = nil,
    executableCode: ExecutableCode? = nil, codeExecutionResult: CodeExecutionResult? = nil,
    thought: Bool? = nil, thoughtSignature: String? = nil
  ) {
    self.text = text
    self.inlineData = inlineData
    self.fileData = fileData
    self.functionCall = functionCall
    self.functionResponse = functionResponse
    self.executableCode = executableCode
    self.codeExecutionResult = codeExecutionResult
    self.thought = thought
    self.thoughtSignature = thoughtSignature
  }

  /// Raw bytes with their MIME type (`inlineData`), base64 on the wire.
  public struct Blob: Sendable, Hashable, Codable {
    /// The IANA media type (`image/png`).
    public var mimeType: String
    /// The bytes.
    public var data: Data
    /// Bytes of a media type.
    public init(mimeType: String, data: Data) {
      self.mimeType = mimeType
      self.data = data
    }
  }

  /// A reference to an uploaded file (`fileData`).
  public struct FileData: Sendable, Hashable, Codable {
    /// The IANA media type, when known.
    public var mimeType: String?
    /// The file's URI.
    public var fileUri: String
    /// A file reference.
    public init(mimeType: String? = nil, fileUri: String) {
      self.mimeType = mimeType
      self.fileUri = fileUri
    }
  }

  /// A call the model asks the app to make.
  public struct FunctionCall: Sendable, Hashable, Codable {
    /// The call's id, to match its response.
    public var id: String?
    /// The function's name.
    public var name: String
    /// The arguments, as a JSON object.
    public var args: JSONValue?
    /// A function call.
    public init(id: String? = nil, name: String, args: JSONValue? = nil) {
      self.id = id
      self.name = name
      self.args = args
    }
  }

  /// The app's answer to a `FunctionCall`.
  public struct FunctionResponse: Sendable, Hashable, Codable {
    /// The id of the call this answers.
    public var id: String?
    /// The function's name.
    public var name: String
    /// The result, as a JSON object.
    public var response: JSONValue
    /// A function response.
    public init(id: String? = nil, name: String, response: JSONValue) {
      self.id = id
      self.name = name
      self.response = response
    }
  }

  /// Code the model wrote for the code-execution tool.
  public struct ExecutableCode: Sendable, Hashable, Codable {
    /// The programming language (`PYTHON`).
    public var language: String?
    /// The source code.
    public var code: String
    /// Code in a language.
    public init(language: String? = nil, code: String) {
      self.language = language
      self.code = code
    }
  }

  /// What running `ExecutableCode` produced.
  public struct CodeExecutionResult: Sendable, Hashable, Codable {
    /// How the run ended (`OUTCOME_OK`).
    public var outcome: String?
    /// What the run printed, or its error.
    public var output: String?
    /// A code-execution result.
    public init(outcome: String? = nil, output: String? = nil) {
      self.outcome = outcome
      self.output = output
    }
  }
}

extension Part {
  /// Whether the part carries nothing the API would accept: no payload (an
  /// empty or missing text and no other data) and no thought signature.
  ///
  /// Gemini refuses such a part in a request, so the encoder leaves it out.
  /// An empty text part with a thought signature is kept: the signature
  /// must go back to the server.
  package var isBlank: Bool {
    (text?.isEmpty ?? true) && inlineData == nil && fileData == nil && functionCall == nil
      && functionResponse == nil && executableCode == nil && codeExecutionResult == nil
      && thoughtSignature == nil
  }
}
