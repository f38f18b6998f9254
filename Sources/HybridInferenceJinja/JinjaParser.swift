/// Builds the statement tree from tokens, failing with the template line on
/// anything outside the supported subset (`include`, `extends`, an unknown
/// filter or test), as jinja2 fails at compile time.
///
/// Parsing is bounded as rendering is: the parser recurses once per nested
/// block, bracket or prefix operator, and the tree it builds is freed
/// recursively, so both nesting (`maximumDepth`) and the operators of one
/// tag (`maximumOperators`, which chain into a tree as deep) are limited.
struct JinjaParser {
  var tokens: [JinjaToken]
  var index = 0
  /// How many blocks and expressions enclose the current one.
  private var depth = 0
  /// Operators, postfixes and filters in the current tag.
  private var operators = 0

  /// jinja2 on CPython reaches its recursion limit near 100 nested
  /// brackets; real templates nest blocks and brackets under 20 deep.
  static let maximumDepth = 100
  /// The longest tag of the reference templates has under 100.
  static let maximumOperators = 2_000
  /// The largest reference template is 16.7 KB (gpt-oss): 30 times that.
  /// Lexing and parsing are linear, so this bounds their time too.
  static let maximumSourceBytes = 512 << 10

  init(tokens: [JinjaToken]) {
    self.tokens = tokens
  }

  static func parse(_ source: String) throws(JinjaError) -> [JinjaNode] {
    guard source.utf8.count <= maximumSourceBytes else {
      throw JinjaError(
        kind: .limit, message: "the template is \(source.utf8.count) bytes, over \(maximumSourceBytes)", line: 0)
    }
    var parser = JinjaParser(tokens: try JinjaLexer.tokenize(source))
    let (nodes, end) = try parser.parseBody(until: [])
    if let end { throw parser.error("unexpected '\(end)'") }
    return nodes
  }

  var current: JinjaToken { tokens[min(index, tokens.count - 1)] }

  func error(_ message: String, kind: JinjaError.Kind = .syntax) -> JinjaError {
    JinjaError(kind: kind, message: message, line: current.line)
  }

  mutating func advance() { index += 1 }

  /// One level deeper; pair with `leave`.
  mutating func enter() throws(JinjaError) {
    depth += 1
    if depth > Self.maximumDepth {
      throw error("nested more than \(Self.maximumDepth) deep", kind: .limit)
    }
  }

  mutating func leave() { depth -= 1 }

  /// One more operator in the current tag.
  mutating func chain() throws(JinjaError) {
    operators += 1
    if operators > Self.maximumOperators {
      throw error("more than \(Self.maximumOperators) operators in one tag", kind: .limit)
    }
  }

  /// Consumes `symbol` if it is next.
  mutating func skip(symbol: String) -> Bool {
    if current.kind == .symbol(symbol) {
      advance()
      return true
    }
    return false
  }

  /// Consumes the name `word` if it is next.
  mutating func skip(name word: String) -> Bool {
    if current.kind == .name(word) {
      advance()
      return true
    }
    return false
  }

  mutating func expect(symbol: String) throws(JinjaError) {
    guard skip(symbol: symbol) else { throw error("expected '\(symbol)'") }
  }

  mutating func expectName() throws(JinjaError) -> String {
    guard case .name(let name) = current.kind else { throw error("expected a name") }
    advance()
    return name
  }

  mutating func expectBlockEnd() throws(JinjaError) {
    guard current.kind == .blockEnd else { throw error("expected end of statement") }
    advance()
  }

  /// Statements up to one of the `ends` block tags, which is consumed (its
  /// name returned) but not its `%}`.
  mutating func parseBody(until ends: Set<String>) throws(JinjaError) -> ([JinjaNode], String?) {
    try enter()
    defer { leave() }
    var nodes: [JinjaNode] = []
    while true {
      let token = current
      switch token.kind {
      case .end:
        if !ends.isEmpty { throw error("missing \(ends.sorted().joined(separator: " or "))") }
        return (nodes, nil)
      case .text(let text):
        advance()
        nodes.append(JinjaNode(statement: .text(text), line: token.line))
      case .variableBegin:
        advance()
        operators = 0
        let expression = try parseTuple()
        guard current.kind == .variableEnd else { throw error("expected '}}'") }
        advance()
        nodes.append(JinjaNode(statement: .output(expression), line: token.line))
      case .blockBegin:
        advance()
        operators = 0
        let keyword = try expectName()
        if ends.contains(keyword) { return (nodes, keyword) }
        nodes.append(JinjaNode(statement: try parseStatement(keyword), line: token.line))
      default:
        throw error("unexpected token")
      }
    }
  }

  private mutating func parseStatement(_ keyword: String) throws(JinjaError) -> JinjaStatement {
    switch keyword {
    case "if": return try parseIf()
    case "for": return try parseFor()
    case "set": return try parseSet()
    case "macro":
      let name = try expectName()
      let parameters = try parseParameters()
      try expectBlockEnd()
      let body = try parseBlock(until: "endmacro")
      return .macro(JinjaMacroDefinition(name: name, parameters: parameters, body: body))
    case "call":
      let parameters = current.kind == .symbol("(") ? try parseParameters() : []
      let call = try parseExpression()
      guard case .call = call else { throw error("expected a macro call") }
      try expectBlockEnd()
      return .callBlock(call: call, parameters: parameters, body: try parseBlock(until: "endcall"))
    case "filter":
      let filters = try parseFilterChain(first: true)
      try expectBlockEnd()
      return .filterBlock(filters: filters, body: try parseBlock(until: "endfilter"))
    case "generation":
      // transformers' AssistantTracker: renders its body unchanged.
      try expectBlockEnd()
      return .filterBlock(filters: [], body: try parseBlock(until: "endgeneration"))
    case "break", "continue":
      try expectBlockEnd()
      return keyword == "break" ? .breakLoop : .continueLoop
    default:
      index -= 1
      throw error("unsupported statement '\(keyword)'", kind: .unsupported)
    }
  }

  /// A body closed by `end`, its `%}` consumed.
  private mutating func parseBlock(until end: String) throws(JinjaError) -> [JinjaNode] {
    let (body, _) = try parseBody(until: [end])
    try expectBlockEnd()
    return body
  }

  private mutating func parseIf() throws(JinjaError) -> JinjaStatement {
    var branches: [(JinjaExpression, [JinjaNode])] = []
    var condition = try parseTuple()
    while true {
      try expectBlockEnd()
      let (body, end) = try parseBody(until: ["elif", "else", "endif"])
      branches.append((condition, body))
      switch end {
      case "elif":
        condition = try parseTuple()
      case "else":
        try expectBlockEnd()
        return .conditional(branches, otherwise: try parseBlock(until: "endif"))
      default:
        try expectBlockEnd()
        return .conditional(branches, otherwise: [])
      }
    }
  }

  private mutating func parseFor() throws(JinjaError) -> JinjaStatement {
    let target = try parseAssignTarget()
    guard skip(name: "in") else { throw error("expected 'in'") }
    let iterable = try parseTuple(conditional: false)
    let condition = skip(name: "if") ? try parseExpression() : nil
    if current.kind == .name("recursive") { throw error("recursive loops are unsupported", kind: .unsupported) }
    try expectBlockEnd()
    let (body, end) = try parseBody(until: ["else", "endfor"])
    var otherwise: [JinjaNode] = []
    try expectBlockEnd()
    if end == "else" { otherwise = try parseBlock(until: "endfor") }
    return .loop(
      JinjaLoop(target: target, iterable: iterable, condition: condition, body: body, otherwise: otherwise))
  }

  private mutating func parseSet() throws(JinjaError) -> JinjaStatement {
    let target = try parseAssignTarget(allowAttribute: true)
    if skip(symbol: "=") {
      let value = try parseTuple()
      try expectBlockEnd()
      return .assign(target: target, value: value)
    }
    guard case .name(let name) = target else { throw error("expected '='") }
    let filters = try parseFilterChain(first: false)
    try expectBlockEnd()
    return .assignBlock(name: name, filters: filters, body: try parseBlock(until: "endset"))
  }

  /// `name`, `a, b`, `(a, b)` or (for `set`) `ns.attribute`.
  private mutating func parseAssignTarget(allowAttribute: Bool = false) throws(JinjaError) -> JinjaExpression {
    var names: [JinjaExpression] = []
    let parenthesised = skip(symbol: "(")
    repeat {
      let name = try expectName()
      if allowAttribute, skip(symbol: ".") {
        return .attribute(.name(name), try expectName())
      }
      names.append(.name(name))
    } while skip(symbol: ",") && current.kind != .symbol(")")
    if parenthesised { try expect(symbol: ")") }
    return names.count == 1 && !parenthesised ? names[0] : .tuple(names)
  }

  /// `(a, b=default, ...)` of a macro or a call block.
  private mutating func parseParameters() throws(JinjaError) -> [(String, JinjaExpression?)] {
    try expect(symbol: "(")
    var parameters: [(String, JinjaExpression?)] = []
    while !skip(symbol: ")") {
      if !parameters.isEmpty { try expect(symbol: ",") }
      if skip(symbol: ")") { break }
      let name = try expectName()
      parameters.append((name, skip(symbol: "=") ? try parseExpression() : nil))
    }
    return parameters
  }

  /// `| a | b(x)` (or `a | b(x)` when `first` has no leading pipe).
  mutating func parseFilterChain(first: Bool) throws(JinjaError) -> [(String, JinjaCallArguments)] {
    var filters: [(String, JinjaCallArguments)] = []
    var needsPipe = !first
    while !needsPipe || skip(symbol: "|") {
      needsPipe = true
      let name = try expectName()
      filters.append((name, current.kind == .symbol("(") ? try parseCallArguments() : JinjaCallArguments()))
    }
    return filters
  }
}
