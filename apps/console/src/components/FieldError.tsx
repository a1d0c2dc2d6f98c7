import { FormHelperText, HelperText, HelperTextItem } from '@patternfly/react-core';

/** The reason a form field was refused, under the field (its id for aria-describedby). */
export function FieldError({ id, message }: { id: string; message: string | undefined }) {
  if (!message) return null;
  return (
    <FormHelperText>
      <HelperText id={id} data-testid={id}>
        <HelperTextItem variant="error">{message}</HelperTextItem>
      </HelperText>
    </FormHelperText>
  );
}
