// MailerLite runs on Laravel and answers validation failures with Laravel's envelope. The docs
// (developers.mailerlite.com, "Validation errors" and "Batching") show it as
//   422 {"message": "The given data was invalid.", "errors": {"email": ["The email must be a valid email address."]}}
// with one array of messages per field path (e.g. "requests.0.method"). The messages below are Laravel's
// default English ones for the rules involved.

export type FieldErrors = Record<string, string[]>;

export class Validator {
  readonly errors: FieldErrors = {};

  add(field: string, message: string): void {
    const list = this.errors[field] ?? [];
    list.push(message);
    this.errors[field] = list;
  }

  get failed(): boolean {
    return Object.keys(this.errors).length > 0;
  }

  required(field: string): void {
    this.add(field, `The ${label(field)} field is required.`);
  }

  invalidEmail(field: string): void {
    this.add(field, `The ${label(field)} must be a valid email address.`);
  }

  notArray(field: string): void {
    this.add(field, `The ${label(field)} must be an array.`);
  }

  notString(field: string): void {
    this.add(field, `The ${label(field)} must be a string.`);
  }

  invalidSelection(field: string): void {
    this.add(field, `The selected ${label(field)} is invalid.`);
  }

  tooLong(field: string, max: number): void {
    this.add(field, `The ${label(field)} must not be greater than ${max} characters.`);
  }
}

/** Laravel shows attribute names with underscores as spaces ("last_name" -> "last name"). */
function label(field: string): string {
  return field.replaceAll('_', ' ');
}

export function validationBody(errors: FieldErrors): { message: string; errors: FieldErrors } {
  return { message: 'The given data was invalid.', errors };
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
