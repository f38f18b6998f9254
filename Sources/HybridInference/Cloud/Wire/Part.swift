import Foundation

/// One piece of a turn: text, inline data, a function call or its result, code.
///
/// Follows the REST `Part` union field for field. Exactly one payload field is
/// normally set; `thought` and `thoughtSignature` qualify it.
public struct Part: Sendable, Hashable, Codable {
  public var text: String?
  public var inlineData: Blob?
  public var fileData: FileData?
  public var functionCall: FunctionCall?
  public var functionResponse: FunctionResponse?
  public var executableCode: ExecutableCode?
  public var codeExecutionResult: CodeExecutionResult?
  /// True when the part is a thought summary rather than answer text.
  public var thought: Bool?
  /// An opaque signature that must be sent back with the part in later turns.
  public var thoughtSignature: String?

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
    public var mimeType: String
    public var data: Data
    public init(mimeType: String, data: Data) {
      self.mimeType = mimeType
      self.data = data
    }
  }

  /// A reference to an uploaded file (`fileData`).
  public struct FileData: Sendable, Hashable, Codable {
    public var mimeType: String?
    public var fileUri: String
    public init(mimeType: String? = nil, fileUri: String) {
      self.mimeType = mimeType
      self.fileUri = fileUri
    }
  }

  /// A call the model asks the app to make.
  public struct FunctionCall: Sendable, Hashable, Codable {
    public var id: String?
    public var name: String
    public var args: JSONValue?
    public init(id: String? = nil, name: String, args: JSONValue? = nil) {
      self.id = id
      self.name = name
      self.args = args
    }
  }

  /// The app's answer to a `FunctionCall`.
  public struct FunctionResponse: Sendable, Hashable, Codable {
    public var id: String?
    public var name: String
    public var response: JSONValue
    public init(id: String? = nil, name: String, response: JSONValue) {
      self.id = id
      self.name = name
      self.response = response
    }
  }

  /// Code the model wrote for the code-execution tool.
  public struct ExecutableCode: Sendable, Hashable, Codable {
    public var language: String?
    public var code: String
    public init(language: String? = nil, code: String) {
      self.language = language
      self.code = code
    }
  }

  /// What running `ExecutableCode` produced.
  public struct CodeExecutionResult: Sendable, Hashable, Codable {
    public var outcome: String?
    public var output: String?
    public init(outcome: String? = nil, output: String? = nil) {
      self.outcome = outcome
      self.output = output
    }
  }
}
