// MailerLite runs on Laravel and answers validation failures with Laravel's envelope. The docs
// (developers.mailerlite.com, "Validation errors") show it as
//   422 {"message": "The given data was invalid.", "errors": {"email": ["The email must be a valid email address."]}}
// with one array of messages per field path (e.g. "groups.0"). The messages are Laravel's default English ones,
// which show attribute names with underscores as spaces ("last_name" -> "last name").

const label = (field: string) => field.replaceAll('_', ' ');

export class Validator {
  readonly errors: Record<string, string[]> = {};

  add(field: string, message: string): void {
    this.errors[field] ??= [];
    this.errors[field].push(message);
  }

  get failed(): boolean {
    return Object.keys(this.errors).length > 0;
  }

  required = (field: string) => this.add(field, `The ${label(field)} field is required.`);
  invalidEmail = (field: string) => this.add(field, `The ${label(field)} must be a valid email address.`);
  notArray = (field: string) => this.add(field, `The ${label(field)} must be an array.`);
  notString = (field: string) => this.add(field, `The ${label(field)} must be a string.`);
  invalidSelection = (field: string) => this.add(field, `The selected ${label(field)} is invalid.`);
  tooLong = (field: string, max: number) =>
    this.add(field, `The ${label(field)} must not be greater than ${max} characters.`);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
