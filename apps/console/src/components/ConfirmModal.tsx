import { Alert, Button, Modal, ModalBody, ModalFooter, ModalHeader } from '@patternfly/react-core';
import type { ReactNode } from 'react';
import { describeRefusal, type ApiError } from '../graphql/client.js';

/**
 * A confirmation that says what will happen before anything is sent; the API's refusal, if any,
 * is shown in place and the dialog stays open.
 */
export function ConfirmModal({
  id,
  title,
  children,
  confirm,
  danger = false,
  pending,
  error,
  onConfirm,
  onClose,
}: {
  id: string;
  title: string;
  children: ReactNode;
  confirm: string;
  danger?: boolean;
  pending: boolean;
  error: ApiError | undefined;
  onConfirm: () => void;
  onClose: () => void;
}) {
  return (
    <Modal isOpen variant="small" onClose={onClose} aria-labelledby={`${id}-title`}>
      <ModalHeader title={title} labelId={`${id}-title`} />
      <ModalBody>
        {children}
        {error ? (
          <Alert variant="danger" isInline title="The API refused the change" className="fleet-gap">
            {describeRefusal(error)}
          </Alert>
        ) : null}
      </ModalBody>
      <ModalFooter>
        <Button
          variant={danger ? 'danger' : 'primary'}
          data-mutates
          isLoading={pending}
          isDisabled={pending}
          onClick={onConfirm}
        >
          {confirm}
        </Button>
        <Button variant="link" onClick={onClose}>
          Cancel
        </Button>
      </ModalFooter>
    </Modal>
  );
}
