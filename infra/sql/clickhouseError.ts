// ClickHouse's error text and the HTTP status its HTTP interface answers each code with. The status
// table is ClickHouse's src/Server/HTTP/exceptionCodeToHTTPStatus.cpp (codes not listed there: 500);
// the numbers and names are src/Common/ErrorCodes.cpp. Facts carried over, not code.

/** Error codes this server raises itself, by ClickHouse's names. */
export const errorCodes = {
  SYNTAX_ERROR: 62,
  UNKNOWN_FORMAT: 73,
  UNKNOWN_DATABASE: 81,
  UNKNOWN_SETTING: 115,
  READONLY: 164,
  TOO_MANY_SIMULTANEOUS_QUERIES: 202,
  QUERY_IS_TOO_LARGE: 229,
  SETTING_CONSTRAINT_VIOLATION: 452,
  ACCESS_DENIED: 497,
  AUTHENTICATION_FAILED: 516,
} as const;

/** The codes exceptionCodeToHTTPStatus.cpp names, grouped by the status they answer with (numbers checked against the engine's errorCodeToName in sqlServer.store.test.ts). */
export const statusGroups: Record<number, Record<string, number>> = {
  401: { REQUIRED_PASSWORD: 194 },
  403: { UNKNOWN_USER: 192, WRONG_PASSWORD: 193, AUTHENTICATION_FAILED: 516, SET_NON_GRANTED_ROLE: 512, ACCESS_DENIED: 497 },
  400: {
    BAD_ARGUMENTS: 36, CANNOT_COMPILE_REGEXP: 427, CANNOT_PARSE_TEXT: 6, CANNOT_PARSE_ESCAPE_SEQUENCE: 25, CANNOT_PARSE_QUOTED_STRING: 26,
    CANNOT_PARSE_DATE: 38, CANNOT_PARSE_DATETIME: 41, CANNOT_PARSE_NUMBER: 72, CANNOT_PARSE_DOMAIN_VALUE_FROM_STRING: 441, CANNOT_PARSE_IPV4: 675,
    CANNOT_PARSE_IPV6: 676, CANNOT_PARSE_INPUT_ASSERTION_FAILED: 27, CANNOT_PARSE_UUID: 376, DUPLICATE_COLUMN: 15, ILLEGAL_COLUMN: 44,
    UNKNOWN_ELEMENT_IN_AST: 37, UNKNOWN_TYPE_OF_AST_NODE: 123, THERE_IS_NO_COLUMN: 8, TOO_DEEP_AST: 167, TOO_BIG_AST: 168,
    UNEXPECTED_AST_STRUCTURE: 223, SYNTAX_ERROR: 62, INCORRECT_DATA: 117, TYPE_MISMATCH: 53, VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE: 321,
  },
  404: {
    UNKNOWN_TABLE: 60, UNKNOWN_FUNCTION: 46, UNKNOWN_IDENTIFIER: 47, UNKNOWN_TYPE: 50, UNKNOWN_STORAGE: 56, UNKNOWN_DATABASE: 81,
    UNKNOWN_SETTING: 115, UNKNOWN_DIRECTION_OF_SORTING: 152, UNKNOWN_AGGREGATE_FUNCTION: 63, UNKNOWN_FORMAT: 73, UNKNOWN_DATABASE_ENGINE: 336,
    UNKNOWN_TYPE_OF_QUERY: 78, UNKNOWN_ROLE: 511,
  },
  413: { QUERY_IS_TOO_LARGE: 229 },
  501: { NOT_IMPLEMENTED: 48 },
  503: { SOCKET_TIMEOUT: 209, CANNOT_OPEN_FILE: 76, CANNOT_SCHEDULE_TASK: 439 },
  411: { HTTP_LENGTH_REQUIRED: 381 },
  408: { TIMEOUT_EXCEEDED: 159 },
  415: { UNSUPPORTED_MEDIA_TYPE: 779 },
};

const statusOfCode = new Map(Object.entries(statusGroups).flatMap(([status, codes]) => Object.values(codes).map((code) => [code, Number(status)] as const)));

/** ClickHouse's HTTP status for an exception code: 500 for the codes its table does not name. */
export function httpStatusOf(code: number): number {
  return statusOfCode.get(code) ?? 500;
}

/** An error as ClickHouse words it: `Code: N. DB::Exception: <message>. (NAME)`. */
export class ClickHouseError extends Error {
  override name = 'ClickHouseError';
  readonly code: number;
  /** The whole text ClickHouse's HTTP interface answers with. */
  readonly text: string;
  constructor(code: number, text: string) {
    super(text);
    this.code = code;
    this.text = text;
  }
  /** One raised here: `type` is the code's name in ClickHouse. */
  static of(type: keyof typeof errorCodes, message: string): ClickHouseError {
    const code = errorCodes[type];
    return new ClickHouseError(code, `Code: ${code}. DB::Exception: ${message}. (${type})`);
  }
  /**
   * One the engine raised, as chDB passes it on: its own text, with the engine's user name
   * (`default`) replaced by the reader's, which is who ran the query as far as the client knows.
   */
  static fromEngine(err: unknown, user: string): ClickHouseError {
    const message = err instanceof Error ? err.message : String(err);
    const text = message.replace(/DB::Exception: default: /g, `DB::Exception: ${user}: `).trim();
    const code = /^Code: (\d+)\./.exec(text)?.[1];
    return code === undefined ? new ClickHouseError(1001, `Code: 1001. DB::Exception: ${text}. (STD_EXCEPTION)`) : new ClickHouseError(Number(code), text);
  }
}
