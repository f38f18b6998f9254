/// A parsed template: statements and expressions, immutable and shareable,
/// so one parse serves every render of a loaded model.
indirect enum JinjaExpression: Sendable {
  case literal(JinjaLiteral)
  case name(String)
  case list([JinjaExpression])
  case tuple([JinjaExpression])
  case dict([(JinjaExpression, JinjaExpression)])
  case attribute(JinjaExpression, String)
  case item(JinjaExpression, JinjaExpression)
  case slice(JinjaExpression, start: JinjaExpression?, stop: JinjaExpression?, step: JinjaExpression?)
  case call(JinjaExpression, JinjaCallArguments)
  case filter(JinjaExpression, name: String, JinjaCallArguments)
  case test(JinjaExpression, name: String, negated: Bool, JinjaCallArguments)
  case unary(String, JinjaExpression)
  case binary(String, JinjaExpression, JinjaExpression)
  case compare(JinjaExpression, [(String, JinjaExpression)])
  case conditional(JinjaExpression, condition: JinjaExpression, otherwise: JinjaExpression?)
}

/// A constant written in the template.
enum JinjaLiteral: Sendable {
  case none
  case bool(Bool)
  case int(Int)
  case double(Double)
  case string(String)
}

/// The arguments written at a call, filter or test.
struct JinjaCallArguments: Sendable {
  var positional: [JinjaExpression] = []
  var keyword: [(String, JinjaExpression)] = []
}

/// One statement with the line it starts on, for error messages.
struct JinjaNode: Sendable {
  var statement: JinjaStatement
  var line: Int
}

/// The statements of the supported subset.
indirect enum JinjaStatement: Sendable {
  case text(String)
  case output(JinjaExpression)
  case conditional([(JinjaExpression, [JinjaNode])], otherwise: [JinjaNode])
  case loop(JinjaLoop)
  case assign(target: JinjaExpression, value: JinjaExpression)
  case assignBlock(name: String, filters: [(String, JinjaCallArguments)], body: [JinjaNode])
  case macro(JinjaMacroDefinition)
  case callBlock(call: JinjaExpression, parameters: [(String, JinjaExpression?)], body: [JinjaNode])
  case filterBlock(filters: [(String, JinjaCallArguments)], body: [JinjaNode])
  case breakLoop
  case continueLoop
}

/// `{% for target in iterable if condition %}body{% else %}otherwise{% endfor %}`.
struct JinjaLoop: Sendable {
  var target: JinjaExpression
  var iterable: JinjaExpression
  var condition: JinjaExpression?
  var body: [JinjaNode]
  var otherwise: [JinjaNode]
}

/// `{% macro name(parameters) %}body{% endmacro %}`.
struct JinjaMacroDefinition: Sendable {
  var name: String
  var parameters: [(String, JinjaExpression?)]
  var body: [JinjaNode]
}
