import Foundation
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

/// What the command line asks for.
public enum Command: Sendable, Hashable {
  /// `--help`: print the usage text.
  case help
  /// `--version`: print the version.
  case version
  /// `--devices`: list the devices llama.cpp can compute on.
  case devices
  /// Answer a prompt, or chat.
  case chat(ChatOptions)
}

/// The hand-written parser for `hybrid-chat`'s command line.
///
/// Accepts `--flag value` and `--flag=value`; words that are not flags form
/// the prompt, joined by spaces; `--` ends the flags, so a prompt may start
/// with a dash. A repeated flag takes its last value. The first problem found
/// is thrown as a usage error.
public enum ArgumentParser {
  /// Parses `arguments` (without the program name).
  public static func parse(_ arguments: [String]) throws(CommandError) -> Command {
    var options = ChatOptions()
    var promptWords: [String] = []
    var index = arguments.startIndex
    var flagsEnded = false
    while index < arguments.endIndex {
      let argument = arguments[index]
      index += 1
      if flagsEnded || !looksLikeFlag(argument) {
        promptWords.append(argument)
        continue
      }
      if argument == "--" {
        flagsEnded = true
        continue
      }
      let (name, inlineValue) = split(argument)
      guard let flag = Flag(spelling: name) else {
        throw .usage("unknown option '\(name)'")
      }
      switch flag {
      case .help: return .help
      case .version: return .version
      case .devices: return .devices
      default: break
      }
      guard flag.takesValue else {
        if inlineValue != nil { throw .usage("option '\(name)' takes no value") }
        try flag.apply(nil, to: &options)
        continue
      }
      let value: String
      if let inlineValue {
        value = inlineValue
      } else if index < arguments.endIndex, !arguments[index].hasPrefix("--") {
        value = arguments[index]
        index += 1
      } else {
        throw .usage("option '\(name)' needs a value")
      }
      try flag.apply(value, to: &options)
    }
    if options.serverModel != nil, options.server == nil {
      throw .usage("option '--server-model' needs '--server URL'")
    }
    if options.usesVertexAI, options.server != nil {
      throw .usage("options '--vertex-project' and '--vertex-location' are for Gemini; they cannot go with '--server'")
    }
    if options.projectorPath != nil, case .source? = options.model {
      throw .usage("option '--projector' goes with a model on this machine: '--model PATH' or the default model")
    }
    if !promptWords.isEmpty { options.prompt = promptWords.joined(separator: " ") }
    return .chat(options)
  }

  /// A lone `-` and negative numbers are prompt words; anything else that
  /// starts with a dash is meant as a flag.
  private static func looksLikeFlag(_ argument: String) -> Bool {
    guard argument.hasPrefix("-"), argument != "-" else { return false }
    return Double(argument) == nil
  }

  private static func split(_ argument: String) -> (name: String, value: String?) {
    guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else {
      return (argument, nil)
    }
    return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
  }
}

/// How each flag checks its value and stores it.
extension Flag {
  func apply(_ value: String?, to options: inout ChatOptions) throws(CommandError) {
    let value = value ?? ""
    switch self {
    case .help, .version, .devices:
      break
    case .noStream:
      options.noStream = true
    case .json:
      options.json = true
    case .hideThoughts:
      options.hideThoughts = true
    case .continueInterrupted:
      options.continuesInterruptedAnswers = true
    case .fallbackOn:
      options.fallbackPolicy = try RoutingFlags.policy(value)
    case .hedgeAfter:
      options.hedgeAfterMilliseconds = try integer(value, "a number of milliseconds >= 0") {
        (0...3_600_000).contains($0)
      }
    case .mode:
      guard let mode = InferenceMode(rawValue: value) else {
        throw .usage("unknown mode '\(value)' for --mode (expected \(InferenceMode.allNames))")
      }
      options.mode = mode
    case .model:
      options.model = try ModelArgument(parsing: nonEmpty(value))
    case .projector:
      options.projectorPath = try nonEmpty(value)
    case .gpu:
      options.gpu = try GPUArgument.parse(value)
    case .cloudModel:
      options.cloudModel = try nonEmpty(value)
    case .server:
      guard let url = URL(string: value), url.scheme == "http" || url.scheme == "https",
        url.host?.isEmpty == false
      else {
        throw .usage("option '--server' needs an http(s) URL such as http://127.0.0.1:8080/v1, got '\(value)'")
      }
      options.server = value
    case .tool:
      guard let tool = BuiltInTool(rawValue: value) else {
        throw .usage(
          "option '--tool' expects one of \(BuiltInTool.allCases.map(\.rawValue).joined(separator: ", ")), got '\(value)'"
        )
      }
      if !options.tools.contains(tool) { options.tools.append(tool) }
    case .serverModel:
      options.serverModel = try nonEmpty(value)
    case .system:
      options.systemInstructions = value.isEmpty ? nil : value
    case .temperature:
      options.temperature = try number(value, "a number >= 0") { $0 >= 0 }
    case .topP:
      options.topP = try number(value, "a number in (0, 1]") { $0 > 0 && $0 <= 1 }
    case .topK:
      options.topK = try integer(value, "an integer > 0") { $0 > 0 }
    case .seed:
      options.seed = try integer(value, "an integer in 0...\(Int32.max)") {
        (0...Int(Int32.max)).contains($0)
      }
    case .maxTokens:
      options.maxTokens = try integer(value, "an integer > 0") { $0 > 0 }
    case .thinking:
      guard let level = ThinkingConfig.ThinkingLevel(rawValue: value.uppercased()) else {
        throw .usage("unknown level '\(value)' for --thinking (expected minimal|low|medium|high)")
      }
      options.thinking = level
    case .reasoning:
      options.reasoning = try ReasoningArgument.parse(value)
    case .image:
      _ = try ImageFile.mimeType(for: try nonEmpty(value))
      options.imagePaths.append(value)
    case .vertexProject:
      options.vertexProject = try nonEmpty(value)
    case .vertexLocation:
      // It becomes part of a host name: a region or `global`, nothing else.
      guard !value.isEmpty, value.utf8.count <= 63,
        value.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D })
      else {
        throw .usage("option '--vertex-location' needs a region such as us-central1, or global; got '\(value)'")
      }
      options.vertexLocation = value
    }
  }

  private func nonEmpty(_ value: String) throws(CommandError) -> String {
    guard !value.isEmpty else { throw .usage("option '\(spelling)' needs a value") }
    return value
  }

  private func number(_ value: String, _ expected: String, _ isValid: (Double) -> Bool)
    throws(CommandError) -> Double
  {
    guard let number = Double(value), number.isFinite, isValid(number) else {
      throw .usage("option '\(spelling)' needs \(expected), got '\(value)'")
    }
    return number
  }

  private func integer(_ value: String, _ expected: String, _ isValid: (Int) -> Bool)
    throws(CommandError) -> Int
  {
    guard let number = Int(value), isValid(number) else {
      throw .usage("option '\(spelling)' needs \(expected), got '\(value)'")
    }
    return number
  }
}
