import Foundation

/// A chat template parsed once, rendered any number of times.
///
/// Parsing is the expensive part; a loaded model keeps one of these so each
/// request only interprets the tree.
struct JinjaTemplate: Sendable {
  private let nodes: [JinjaNode]

  init(_ source: String) throws(JinjaError) {
    nodes = try JinjaParser.parse(source)
  }

  /// The output for `variables`; `now` is what `strftime_now` reads.
  func render(_ variables: [String: JinjaValue], now: Date = Date()) throws(JinjaError) -> String {
    let interpreter = JinjaInterpreter(now: now)
    let globals = JinjaScope(parent: nil, variables: interpreter.globals())
    let scope = JinjaScope(parent: globals, variables: variables)
    var output = ""
    _ = try interpreter.render(nodes, scope: scope, into: &output)
    return output
  }
}
