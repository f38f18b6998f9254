import Foundation

/// Something a model may ask the app to do, which the session runs for it.
///
/// Declare the arguments as a `Generable` struct: their schema is what the
/// model sees, and the model's arguments are checked against it and decoded
/// into the struct before `call(arguments:)` runs, so the tool never sees
/// arguments of the wrong shape.
///
/// ```swift
/// struct GetWeather: Tool {
///   struct Arguments: Generable { var city: String }
///   let name = "get_weather"
///   let description = "The current weather in a city."
///   func call(arguments: Arguments) async throws -> String { "Sunny, 21 °C in \(arguments.city)" }
/// }
/// let agent = GenerativeModelSession(model: cloud, tools: [GetWeather()])
/// ```
///
/// A tool may have side effects, so a request in which any tool has run never
/// falls back to another model (see `GenerativeModelSession`). Cancelling the
/// request cancels the task a running tool is called on.
public protocol Tool: Sendable {
  /// The arguments the model supplies, decoded from its JSON.
  associatedtype Arguments: Generable

  /// The name the model calls the tool by: letters, digits, `_` and `-`,
  /// unique within a session.
  var name: String { get }

  /// What the tool does, in words the model reads to decide when to call it.
  var description: String { get }

  /// Runs the tool; the returned text goes back to the model as the call's output.
  /// - Throws: anything; the request then ends with
  ///   `HybridInferenceError.toolFailed` carrying the tool's name and this error.
  func call(arguments: Arguments) async throws -> String
}

/// A tool as a backend sees it: its name, description and the JSON Schema of
/// its arguments, but not its code (the session runs the tools).
public struct ToolDeclaration: Sendable, Hashable {
  /// The tool's name.
  public var name: String
  /// What the tool does.
  public var description: String
  /// The JSON Schema of the tool's arguments (an object).
  public var parameters: GenerationSchema

  /// A declaration; backends under test can be given one directly.
  public init(name: String, description: String, parameters: GenerationSchema) {
    self.name = name
    self.description = description
    self.parameters = parameters
  }
}

/// A tool with its `Arguments` type erased: decodes JSON arguments, checks
/// them against the schema and calls the tool.
struct AnyTool: Sendable {
  let declaration: ToolDeclaration
  private let invoke: @Sendable (Data) async throws -> String
  private let decode: @Sendable (Data) throws -> Void

  init<T: Tool>(_ tool: T) {
    declaration = ToolDeclaration(
      name: tool.name, description: tool.description, parameters: T.Arguments.generationSchema)
    decode = { data in _ = try JSONDecoder().decode(T.Arguments.self, from: data) }
    invoke = { data in
      let arguments = try JSONDecoder().decode(T.Arguments.self, from: data)
      return try await tool.call(arguments: arguments)
    }
  }

  var name: String { declaration.name }

  /// Checks `arguments` against the schema and decodes them; nil when they
  /// are usable, else why not (sent back to the model as an error output).
  func problem(with arguments: JSONValue) -> String? {
    let text = arguments.jsonText
    do {
      _ = try declaration.parameters.check(text)
      try decode(Data(text.utf8))
      return nil
    } catch let error as HybridInferenceError {
      if case .invalidStructuredOutput(let why) = error { return why }
      return error.description
    } catch {
      return "the arguments do not decode: \(error)"
    }
  }

  /// Runs the tool on arguments already checked by `problem(with:)`.
  func call(_ arguments: JSONValue) async throws -> String {
    try await invoke(Data(arguments.jsonText.utf8))
  }
}
